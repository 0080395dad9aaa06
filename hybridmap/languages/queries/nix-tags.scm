; Nix tags for hybridmap.
; A Nix file is one expression; its "top level" is the attribute set or `let` it evaluates to, possibly
; behind the file's argument pattern (`{ lib, ... }: { ... }`) and a `let ... in`. Only single-name
; bindings there are definitions: functions (lambda values) and variables (anything else). Nested
; configuration attributes (`meta.description = ...`, NixOS options) are not tagged.

; Top-level functions: `name = arg: ...;` / `name = { a, b ? 1 }: ...;`.
(source_code [
  (_ (binding_set (binding attrpath: (attrpath . (identifier) @name.definition.function .) expression: (function_expression)) @definition.function))
  (function_expression body: (_ (binding_set (binding attrpath: (attrpath . (identifier) @name.definition.function .) expression: (function_expression)) @definition.function)))
  (function_expression body: (let_expression body: (_ (binding_set (binding attrpath: (attrpath . (identifier) @name.definition.function .) expression: (function_expression)) @definition.function))))
  (let_expression body: (_ (binding_set (binding attrpath: (attrpath . (identifier) @name.definition.function .) expression: (function_expression)) @definition.function)))
])

; Top-level variables: any other value.
(source_code [
  (_ (binding_set (binding attrpath: (attrpath . (identifier) @name.definition.variable .) expression: [(string_expression) (indented_string_expression) (integer_expression) (float_expression) (path_expression) (hpath_expression) (spath_expression) (uri_expression) (list_expression) (attrset_expression) (rec_attrset_expression) (let_attrset_expression) (apply_expression) (select_expression) (variable_expression) (binary_expression) (unary_expression) (if_expression) (let_expression) (with_expression) (parenthesized_expression) (has_attr_expression) (assert_expression)]) @definition.variable))
  (function_expression body: (_ (binding_set (binding attrpath: (attrpath . (identifier) @name.definition.variable .) expression: [(string_expression) (indented_string_expression) (integer_expression) (float_expression) (path_expression) (hpath_expression) (spath_expression) (uri_expression) (list_expression) (attrset_expression) (rec_attrset_expression) (let_attrset_expression) (apply_expression) (select_expression) (variable_expression) (binary_expression) (unary_expression) (if_expression) (let_expression) (with_expression) (parenthesized_expression) (has_attr_expression) (assert_expression)]) @definition.variable)))
  (function_expression body: (let_expression body: (_ (binding_set (binding attrpath: (attrpath . (identifier) @name.definition.variable .) expression: [(string_expression) (indented_string_expression) (integer_expression) (float_expression) (path_expression) (hpath_expression) (spath_expression) (uri_expression) (list_expression) (attrset_expression) (rec_attrset_expression) (let_attrset_expression) (apply_expression) (select_expression) (variable_expression) (binary_expression) (unary_expression) (if_expression) (let_expression) (with_expression) (parenthesized_expression) (has_attr_expression) (assert_expression)]) @definition.variable))))
  (let_expression body: (_ (binding_set (binding attrpath: (attrpath . (identifier) @name.definition.variable .) expression: [(string_expression) (indented_string_expression) (integer_expression) (float_expression) (path_expression) (hpath_expression) (spath_expression) (uri_expression) (list_expression) (attrset_expression) (rec_attrset_expression) (let_attrset_expression) (apply_expression) (select_expression) (variable_expression) (binary_expression) (unary_expression) (if_expression) (let_expression) (with_expression) (parenthesized_expression) (has_attr_expression) (assert_expression)]) @definition.variable)))
])

; "Methods": functions in the attribute set built by a constructor-like function (`mkGreeter = { name }: { greet = x: ...; }`).
(binding
  expression: (function_expression
    body: [
      (attrset_expression (binding_set (binding attrpath: (attrpath . (identifier) @name.definition.method .) expression: (function_expression)) @definition.method))
      (rec_attrset_expression (binding_set (binding attrpath: (attrpath . (identifier) @name.definition.method .) expression: (function_expression)) @definition.method))
    ]))

; Calls `f x` and `lib.f x` (curried calls `f a b` are tagged once, at the innermost application).
(apply_expression function: (variable_expression name: (identifier) @name.reference.call))
(apply_expression function: (select_expression attrpath: (attrpath (identifier) @name.reference.call .)))

; Imports of names: `inherit (lib) foo bar;`.
(inherit_from attrs: (inherited_attrs attr: (identifier) @name.reference.module))
