; PHP tags for hybridmap.
(namespace_definition name: (namespace_name) @name.definition.namespace) @definition.namespace
(class_declaration name: (name) @name.definition.class) @definition.class
(interface_declaration name: (name) @name.definition.interface) @definition.interface
(trait_declaration name: (name) @name.definition.trait) @definition.trait
(enum_declaration name: (name) @name.definition.enum) @definition.enum
(method_declaration name: (name) @name.definition.method) @definition.method
(function_definition name: (name) @name.definition.function) @definition.function
(const_declaration (const_element (name) @name.definition.constant)) @definition.constant

(function_call_expression function: (name) @name.reference.call)
(function_call_expression function: (qualified_name (name) @name.reference.call))
(member_call_expression name: (name) @name.reference.call)
(scoped_call_expression name: (name) @name.reference.call)
(scoped_call_expression scope: (name) @name.reference.class)
(object_creation_expression (name) @name.reference.class)
(object_creation_expression (qualified_name (name) @name.reference.class))
(base_clause (name) @name.reference.class)
(class_interface_clause (name) @name.reference.implementation)
(named_type (name) @name.reference.type)
