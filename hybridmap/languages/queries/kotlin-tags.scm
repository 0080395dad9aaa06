; Kotlin tags for hybridmap (interfaces parse as class_declaration in this grammar).
(class_declaration (type_identifier) @name.definition.class) @definition.class
(object_declaration (type_identifier) @name.definition.class) @definition.class
(class_body (function_declaration (simple_identifier) @name.definition.method) @definition.method)
(source_file (function_declaration (simple_identifier) @name.definition.function) @definition.function)
(source_file (property_declaration (variable_declaration (simple_identifier) @name.definition.constant)) @definition.constant)

(call_expression (simple_identifier) @name.reference.call)
(call_expression (navigation_expression (navigation_suffix (simple_identifier) @name.reference.call)))
(delegation_specifier (user_type (type_identifier) @name.reference.class))
(delegation_specifier (constructor_invocation (user_type (type_identifier) @name.reference.class)))
(parameter (user_type (type_identifier) @name.reference.type))
(function_declaration (user_type (type_identifier) @name.reference.type))
