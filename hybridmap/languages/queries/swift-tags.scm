; Swift tags for hybridmap (class, struct and enum all parse as class_declaration).
(class_declaration name: (type_identifier) @name.definition.class) @definition.class
(protocol_declaration name: (type_identifier) @name.definition.interface) @definition.interface
(class_body (function_declaration name: (simple_identifier) @name.definition.method) @definition.method)
(enum_class_body (function_declaration name: (simple_identifier) @name.definition.method) @definition.method)
(protocol_body (protocol_function_declaration name: (simple_identifier) @name.definition.method) @definition.method)
(source_file (function_declaration name: (simple_identifier) @name.definition.function) @definition.function)
(source_file (property_declaration name: (pattern bound_identifier: (simple_identifier) @name.definition.constant)) @definition.constant)

(call_expression (simple_identifier) @name.reference.call)
(call_expression (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @name.reference.call)))
(inheritance_specifier inherits_from: (user_type (type_identifier) @name.reference.class))
(parameter (user_type (type_identifier) @name.reference.type))
