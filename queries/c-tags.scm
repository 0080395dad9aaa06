; C tags for hybridmap.
(function_definition declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name.definition.function))) @definition.function
(translation_unit (declaration declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
(translation_unit (declaration declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name.definition.function))) @definition.function)
(struct_specifier name: (type_identifier) @name.definition.struct body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name.definition.struct body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name.definition.enum body: (enumerator_list)) @definition.enum
(type_definition declarator: (type_identifier) @name.definition.type) @definition.type
(preproc_def name: (identifier) @name.definition.macro) @definition.macro
(preproc_function_def name: (identifier) @name.definition.macro) @definition.macro
(translation_unit (declaration declarator: (init_declarator declarator: (identifier) @name.definition.variable)) @definition.variable)
(translation_unit (declaration declarator: (identifier) @name.definition.variable) @definition.variable)
(translation_unit (declaration declarator: (array_declarator declarator: (identifier) @name.definition.variable)) @definition.variable)
(translation_unit (declaration declarator: (init_declarator declarator: (array_declarator declarator: (identifier) @name.definition.variable))) @definition.variable)

(call_expression function: (identifier) @name.reference.call)
(call_expression function: (field_expression field: (field_identifier) @name.reference.call))
(type_identifier) @name.reference.type
