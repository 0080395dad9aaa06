; Dart tags for hybridmap.
(class_definition name: (identifier) @name.definition.class) @definition.class
(enum_declaration name: (identifier) @name.definition.enum) @definition.enum
(mixin_declaration (identifier) @name.definition.trait) @definition.trait
(class_body (method_signature (function_signature name: (identifier) @name.definition.method)) @definition.method)
(class_body (method_signature (getter_signature name: (identifier) @name.definition.method)) @definition.method)
(class_body (declaration (function_signature name: (identifier) @name.definition.method)) @definition.method)
(program (function_signature name: (identifier) @name.definition.function) @definition.function)
(program (static_final_declaration_list (static_final_declaration (identifier) @name.definition.constant)) @definition.constant)

(_ (identifier) @name.reference.call . (selector (argument_part)))
(selector (unconditional_assignable_selector (identifier) @name.reference.call))
(superclass (type_identifier) @name.reference.class)
(interfaces (type_identifier) @name.reference.implementation)
(formal_parameter (type_identifier) @name.reference.type)
