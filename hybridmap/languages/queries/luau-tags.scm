; Luau (Roblox) tags for hybridmap.

; `type T = ...` / `export type T = ...`
(type_definition name: (identifier) @name.definition.type) @definition.type

; `function f()` / `local function f()` at module level.
(chunk (function_declaration name: (identifier) @name.definition.function) @definition.function)

; `function M.f()` (module / static functions) and `function Class:m()` (methods).
(function_declaration name: (dot_index_expression field: (identifier) @name.definition.function)) @definition.function
(function_declaration name: (method_index_expression method: (identifier) @name.definition.method)) @definition.method

; Module-level `local Foo = {}` with a CamelCase name: the usual class table (`Foo.__index = Foo`).
(chunk
  (variable_declaration
    (assignment_statement
      (variable_list . name: (identifier) @name.definition.class .)
      (expression_list . value: (table_constructor) .))) @definition.class
  (#match? @name.definition.class "^_?[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$"))

; Other module-level locals and globals: UPPER_CASE ones are constants, the rest variables.
(chunk
  [
    (variable_declaration (assignment_statement (variable_list name: (identifier) @name.definition.constant)))
    (assignment_statement (variable_list name: (identifier) @name.definition.constant))
  ] @definition.constant
  (#match? @name.definition.constant "^_*[A-Z][A-Z0-9_]*$"))
(chunk
  [
    (variable_declaration (assignment_statement (variable_list name: (identifier) @name.definition.variable)))
    (assignment_statement (variable_list name: (identifier) @name.definition.variable))
  ] @definition.variable
  (#match? @name.definition.variable "^_*[a-z]"))
(chunk
  [
    (variable_declaration (assignment_statement (variable_list name: (identifier) @name.definition.variable) (expression_list . value: (_) @_value)))
    (assignment_statement (variable_list name: (identifier) @name.definition.variable) (expression_list . value: (_) @_value))
  ] @definition.variable
  (#match? @name.definition.variable "^_*[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$")
  (#not-match? @_value "^\\{"))

; Calls `f()`, `M.f()`, `obj:m()`.
(function_call name: (identifier) @name.reference.call)
(function_call name: (dot_index_expression field: (identifier) @name.reference.call))
(function_call name: (method_index_expression method: (identifier) @name.reference.call))

; Type uses: parameter and return annotations, `M.T`, generics, `x :: T`, `type A = B`.
(parameter (identifier) (identifier) @name.reference.type)
(function_declaration parameters: (parameters) . (identifier) @name.reference.type)
(field_type (identifier) @name.reference.type .)
(generic_type (identifier) @name.reference.type)
(optional_type (identifier) @name.reference.type)
(union_type (identifier) @name.reference.type)
(intersection_type (identifier) @name.reference.type)
(function_type (identifier) @name.reference.type)
(tuple_type (identifier) @name.reference.type)
(variable_list (identifier) . (identifier) @name.reference.type)
(cast_expression (_) . (identifier) @name.reference.type .)
(type_definition name: (identifier) . (identifier) @name.reference.type)
