; VHDL tags for hybridmap
(entity_declaration name: (identifier) @name.definition.module) @definition.module
(architecture_body name: (identifier) @name.definition.implementation) @definition.implementation
(package_declaration name: (identifier) @name.definition.namespace) @definition.namespace
(component_declaration name: (identifier) @name.definition.interface) @definition.interface
(function_declaration designator: (identifier) @name.definition.function) @definition.function
(function_body designator: (identifier) @name.definition.function) @definition.function
(procedure_declaration designator: (identifier) @name.definition.function) @definition.function
(procedure_body designator: (identifier) @name.definition.function) @definition.function
(full_type_declaration name: (identifier) @name.definition.type) @definition.type
(subtype_declaration name: (identifier) @name.definition.type) @definition.type
(constant_declaration (identifier_list (identifier) @name.definition.constant)) @definition.constant

(architecture_body entity: (simple_name) @name.reference.implementation)
(package_body package: (simple_name) @name.reference.implementation)
(ambiguous_name prefix: (simple_name) @name.reference.call)
(function_call function: (simple_name) @name.reference.call)
(entity_instantiation entity: (selected_name suffix: (simple_name) @name.reference.class))
(entity_instantiation entity: (simple_name) @name.reference.class)
(component_instantiation component: (simple_name) @name.reference.class)
(use_clause (selected_name prefix: (selected_name suffix: (simple_name) @name.reference.module)))
(type_mark (simple_name) @name.reference.type)
