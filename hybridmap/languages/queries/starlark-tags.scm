; Starlark (Bazel / Buck) tags for hybridmap.
; Definitions: top-level `def`s, top-level rule/macro/provider declarations and module-level names.

; Functions and macros: `def` at module level (nested helper defs are not tagged).
(module (function_definition name: (identifier) @name.definition.function) @definition.function)

; `my_rule = rule(...)`, `my_macro = macro(...)`, `repo = repository_rule(...)`: callable like functions.
(module
  (expression_statement
    (assignment
      left: (identifier) @name.definition.function
      right: (call function: (identifier) @_ctor)) @definition.function)
  (#any-of? @_ctor "rule" "repository_rule" "macro" "symbolic_macro" "module_extension" "tag_class"))

; `FooInfo = provider(...)`: a record type.
(module
  (expression_statement
    (assignment
      left: (identifier) @name.definition.struct
      right: (call function: (identifier) @_ctor)) @definition.struct)
  (#eq? @_ctor "provider"))

; Other module-level names: UPPER_CASE ones are constants, the rest variables.
(module
  (expression_statement
    (assignment
      left: (identifier) @name.definition.constant
      right: (_) @_value) @definition.constant)
  (#match? @name.definition.constant "^_*[A-Z][A-Z0-9_]*$")
  (#not-match? @_value "^(rule|repository_rule|macro|symbolic_macro|module_extension|tag_class|provider)\\("))
(module
  (expression_statement
    (assignment
      left: (identifier) @name.definition.variable
      right: (_) @_value) @definition.variable)
  (#not-match? @name.definition.variable "^_*[A-Z][A-Z0-9_]*$")
  (#not-match? @_value "^(rule|repository_rule|macro|symbolic_macro|module_extension|tag_class|provider)\\("))

; Calls `f(...)` and `mod.f(...)` (rule instantiations in BUILD files are calls too).
(call
  function: [
    (identifier) @name.reference.call
    (attribute attribute: (identifier) @name.reference.call)
  ]
  (#not-eq? @name.reference.call "load"))

; `load("//pkg:file.bzl", "name", alias = "name")`: the imported symbols.
(call
  function: (identifier) @_load
  arguments: (argument_list
    . (string)
    [
      (string (string_content) @name.reference.module)
      (keyword_argument value: (string (string_content) @name.reference.module))
    ])
  (#eq? @_load "load"))

; Provider uses: `FooInfo in target`, `target[FooInfo]`, `providers = [FooInfo]`.
(comparison_operator (identifier) @name.reference.type (#match? @name.reference.type "^[A-Z][A-Za-z0-9_]*Info$"))
(subscript subscript: (identifier) @name.reference.type (#match? @name.reference.type "^[A-Z][A-Za-z0-9_]*Info$"))
(keyword_argument
  name: (identifier) @_key
  value: (list (identifier) @name.reference.type)
  (#eq? @_key "providers"))
