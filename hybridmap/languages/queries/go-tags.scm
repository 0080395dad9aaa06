; Go tags for hybridmap.

; --- definitions ---------------------------------------------------------------

(function_declaration name: (identifier) @name.definition.function) @definition.function
(method_declaration name: (field_identifier) @name.definition.method) @definition.method

(type_spec name: (type_identifier) @name.definition.struct type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name.definition.interface type: (interface_type)) @definition.interface
(type_spec
  name: (type_identifier) @name.definition.type
  type: [
    (type_identifier) (qualified_type) (generic_type) (pointer_type) (function_type)
    (map_type) (slice_type) (array_type) (channel_type) (negated_type)
  ]) @definition.type
(type_alias name: (type_identifier) @name.definition.type) @definition.type

; Interface methods.
(method_elem name: (field_identifier) @name.definition.method) @definition.method

; Package-level constants and variables (not locals inside functions).
(source_file (const_declaration (const_spec name: (identifier) @name.definition.constant) @definition.constant))
(source_file (var_declaration [
  (var_spec name: (identifier) @name.definition.variable) @definition.variable
  (var_spec_list (var_spec name: (identifier) @name.definition.variable) @definition.variable)
]))

; --- references ----------------------------------------------------------------

; Calls `f()`, `pkg.F()`, `x.Method()`.
(call_expression
  function: [
    (identifier) @name.reference.call
    (selector_expression field: (field_identifier) @name.reference.call)
    (generic_type type: (type_identifier) @name.reference.call)
  ])

; Type uses (not the names being declared).
[
  (parameter_declaration type: (type_identifier) @name.reference.type)
  (variadic_parameter_declaration type: (type_identifier) @name.reference.type)
  (pointer_type (type_identifier) @name.reference.type)
  (slice_type element: (type_identifier) @name.reference.type)
  (array_type element: (type_identifier) @name.reference.type)
  (map_type value: (type_identifier) @name.reference.type)
  (map_type key: (type_identifier) @name.reference.type)
  (channel_type value: (type_identifier) @name.reference.type)
  (field_declaration type: (type_identifier) @name.reference.type)
  (function_declaration result: (type_identifier) @name.reference.type)
  (method_declaration result: (type_identifier) @name.reference.type)
  (method_elem result: (type_identifier) @name.reference.type)
  (function_type result: (type_identifier) @name.reference.type)
  (generic_type type: (type_identifier) @name.reference.type)
  (type_elem (type_identifier) @name.reference.type)
  (var_spec type: (type_identifier) @name.reference.type)
  (type_spec type: (type_identifier) @name.reference.type)
  (type_alias type: (type_identifier) @name.reference.type)
  (type_assertion_expression type: (type_identifier) @name.reference.type)
  (type_case type: (type_identifier) @name.reference.type)
  (qualified_type name: (type_identifier) @name.reference.type)
]

; Instantiation `T{...}` (`pkg.T{...}` and `T[int]{...}` are reported by the type-use patterns above).
(composite_literal type: (type_identifier) @name.reference.class)
