; Odin tags for hybridmap

(procedure_declaration . (identifier) @name.definition.function) @definition.function
(overloaded_procedure_declaration . (identifier) @name.definition.function) @definition.function
(struct_declaration . (identifier) @name.definition.struct) @definition.struct
(bit_field_declaration . (identifier) @name.definition.struct) @definition.struct
(enum_declaration . (identifier) @name.definition.enum) @definition.enum
(union_declaration . (identifier) @name.definition.type) @definition.type

; Name :: distinct T  /  Name :: ^T  (type aliases)
(const_declaration
  . (identifier) @name.definition.type
  . [(distinct_type) (type)]) @definition.type

; package-level constants and variables
(source_file
  (const_declaration
    . (identifier) @name.definition.constant
    . [(number) (float) (string) (boolean) (binary_expression) (unary_expression)
       (identifier) (member_expression) (call_expression)]) @definition.constant)
(source_file
  (variable_declaration . (identifier) @name.definition.variable) @definition.variable)
(source_file
  (var_declaration . (identifier) @name.definition.variable) @definition.variable)

; references
(import_declaration (string (string_content) @name.reference.module)) @reference.module

(call_expression
  function: (identifier) @name.reference.call
  (#not-match? @name.reference.call "^(len|cap|size_of|align_of|offset_of|type_of|typeid_of|make|delete|new|free|append|panic|assert|min|max|abs|clamp|cast|transmute|auto_cast)$")) @reference.call

(struct . (identifier) @name.reference.class) @reference.class

(type (identifier) @name.reference.type) @reference.type
(field_type (identifier) @name.reference.type .) @reference.type
