; C++ tags for hybridmap.
(function_definition declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function
(function_definition declarator: (function_declarator declarator: (qualified_identifier name: (identifier) @name.definition.method))) @definition.method
(function_definition declarator: (function_declarator declarator: (field_identifier) @name.definition.method)) @definition.method
(field_declaration declarator: (function_declarator declarator: (field_identifier) @name.definition.method)) @definition.method
(translation_unit (declaration declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
(namespace_definition (declaration_list (declaration declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function))
(class_specifier name: (type_identifier) @name.definition.class body: (field_declaration_list)) @definition.class
(struct_specifier name: (type_identifier) @name.definition.struct body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name.definition.enum body: (enumerator_list)) @definition.enum
(namespace_definition name: (namespace_identifier) @name.definition.namespace) @definition.namespace
(type_definition declarator: (type_identifier) @name.definition.type) @definition.type
(alias_declaration name: (type_identifier) @name.definition.type) @definition.type
(preproc_def name: (identifier) @name.definition.macro) @definition.macro
(preproc_function_def name: (identifier) @name.definition.macro) @definition.macro

(call_expression function: (identifier) @name.reference.call)
(call_expression function: (qualified_identifier name: (identifier) @name.reference.call))
(call_expression function: (field_expression field: (field_identifier) @name.reference.call))
(type_identifier) @name.reference.type
(base_class_clause (type_identifier) @name.reference.class)
