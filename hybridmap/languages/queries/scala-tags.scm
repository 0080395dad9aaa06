; Scala tags for hybridmap.
(class_definition name: (identifier) @name.definition.class) @definition.class
(object_definition name: (identifier) @name.definition.module) @definition.module
(trait_definition name: (identifier) @name.definition.trait) @definition.trait
(enum_definition name: (identifier) @name.definition.enum) @definition.enum
(template_body (function_definition name: (identifier) @name.definition.method) @definition.method)
(template_body (function_declaration name: (identifier) @name.definition.method) @definition.method)
(compilation_unit (function_definition name: (identifier) @name.definition.function) @definition.function)
(template_body (val_definition pattern: (identifier) @name.definition.constant) @definition.constant)
(compilation_unit (val_definition pattern: (identifier) @name.definition.constant) @definition.constant)

(call_expression function: (identifier) @name.reference.call)
(call_expression function: (field_expression field: (identifier) @name.reference.call))
(instance_expression (type_identifier) @name.reference.class)
(extends_clause type: (type_identifier) @name.reference.class)
(parameter type: (type_identifier) @name.reference.type)
(function_definition return_type: (type_identifier) @name.reference.type)
