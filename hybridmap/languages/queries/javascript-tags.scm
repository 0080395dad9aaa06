; JavaScript (and JSX) tags for hybridmap.
; inherits: ecmascript_imports

; --- definitions ---------------------------------------------------------------

; Functions at top level (exported or not); functions nested in other functions are locals and not tagged.
(program [
  (function_declaration name: (identifier) @name.definition.function) @definition.function
  (generator_function_declaration name: (identifier) @name.definition.function) @definition.function
  (export_statement declaration: [
    (function_declaration name: (identifier) @name.definition.function)
    (generator_function_declaration name: (identifier) @name.definition.function)
  ] @definition.function)
])

; ... and directly inside a top-level IIFE `(function () { ... })()`, `(() => { ... })()`,
; `!function () { ... }()`: said by the types of its ancestors, root to parent, joined by "/"
; (#hm-ancestors?: hybridmap/languages/query_predicates.py); one pattern per parent compiled slowly.
([
  (function_declaration name: (identifier) @name.definition.function)
  (generator_function_declaration name: (identifier) @name.definition.function)
] @definition.function
  (#hm-ancestors? @definition.function "program/expression_statement/(call_expression/(parenthesized_expression/(function_expression|arrow_function)|function_expression)|unary_expression/call_expression/function_expression)/statement_block"))

(class_declaration name: (identifier) @name.definition.class) @definition.class

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name.definition.method
  (#not-eq? @name.definition.method "constructor")) @definition.method
(method_definition
  name: (property_identifier) @name.definition.constructor
  (#eq? @name.definition.constructor "constructor")) @definition.constructor

(field_definition
  property: [(property_identifier) (private_property_identifier)] @name.definition.field) @definition.field

; Top-level `const f = () => {}` / `const f = function () {}` (exported or not) are functions.
(program [
  (lexical_declaration (variable_declarator
    name: (identifier) @name.definition.function
    value: [(arrow_function) (function_expression) (generator_function)]) @definition.function)
  (variable_declaration (variable_declarator
    name: (identifier) @name.definition.function
    value: [(arrow_function) (function_expression) (generator_function)]) @definition.function)
  (export_statement declaration: (lexical_declaration (variable_declarator
    name: (identifier) @name.definition.function
    value: [(arrow_function) (function_expression) (generator_function)]) @definition.function))
])

; Other top-level `const NAME = value` are constants; `let` / `var` are variables. `require()` results are imports.
(program [
  (lexical_declaration kind: "const" (variable_declarator
    name: (identifier) @name.definition.constant
    value: [
      (number) (string) (template_string) (regex) (true) (false) (null) (undefined)
      (object) (array) (identifier) (member_expression) (subscript_expression) (new_expression)
      (binary_expression) (unary_expression) (ternary_expression) (parenthesized_expression)
      (await_expression) (jsx_element) (jsx_self_closing_element)
      (call_expression function: (_) @_callee)
    ]) @definition.constant)
  (export_statement declaration: (lexical_declaration kind: "const" (variable_declarator
    name: (identifier) @name.definition.constant
    value: [
      (number) (string) (template_string) (regex) (true) (false) (null) (undefined)
      (object) (array) (identifier) (member_expression) (subscript_expression) (new_expression)
      (binary_expression) (unary_expression) (ternary_expression) (parenthesized_expression)
      (await_expression) (jsx_element) (jsx_self_closing_element)
      (call_expression function: (_) @_callee)
    ]) @definition.constant))
]
  (#not-eq? @_callee "require"))

(program [
  (lexical_declaration kind: "let" (variable_declarator
    name: (identifier) @name.definition.variable
    value: [
      (number) (string) (template_string) (regex) (true) (false) (null) (undefined)
      (object) (array) (identifier) (member_expression) (subscript_expression) (new_expression)
      (binary_expression) (unary_expression) (ternary_expression) (parenthesized_expression)
      (await_expression) (call_expression)
    ]) @definition.variable)
  (variable_declaration (variable_declarator
    name: (identifier) @name.definition.variable
    value: [
      (number) (string) (template_string) (regex) (true) (false) (null) (undefined)
      (object) (array) (identifier) (member_expression) (subscript_expression) (new_expression)
      (binary_expression) (unary_expression) (ternary_expression) (parenthesized_expression)
      (await_expression) (call_expression)
    ]) @definition.variable)
  (export_statement declaration: (lexical_declaration kind: "let" (variable_declarator
    name: (identifier) @name.definition.variable
    value: [
      (number) (string) (template_string) (regex) (true) (false) (null) (undefined)
      (object) (array) (identifier) (member_expression) (subscript_expression) (new_expression)
      (binary_expression) (unary_expression) (ternary_expression) (parenthesized_expression)
      (await_expression) (call_expression)
    ]) @definition.variable))
])

; CommonJS `exports.f = function () {}` / `module.exports.f = () => {}`.
(assignment_expression
  left: (member_expression
    object: [(identifier) (member_expression)] @_exports
    property: (property_identifier) @name.definition.function)
  right: [(arrow_function) (function_expression)]
  (#match? @_exports "^(module\\.)?exports$")) @definition.function

; Pre-class methods: `Foo.prototype.bar = function () {}`.
(assignment_expression
  left: (member_expression
    object: (member_expression property: (property_identifier) @_prototype)
    property: (property_identifier) @name.definition.method)
  right: [(arrow_function) (function_expression)]
  (#eq? @_prototype "prototype")) @definition.method

; --- references ----------------------------------------------------------------

(call_expression
  function: [
    (identifier) @name.reference.call
    (member_expression property: (property_identifier) @name.reference.call)
  ])

(new_expression
  constructor: [
    (identifier) @name.reference.class
    (member_expression property: (property_identifier) @name.reference.class)
  ])

(class_heritage [
  (identifier) @name.reference.class
  (member_expression property: (property_identifier) @name.reference.class)
])

(import_specifier name: (identifier) @name.reference.module)
(import_clause (identifier) @name.reference.module)

; JSX components `<Widget />` (lower-case tags are HTML elements).
(jsx_opening_element name: (identifier) @name.reference.call (#match? @name.reference.call "^[A-Z]"))
(jsx_self_closing_element name: (identifier) @name.reference.call (#match? @name.reference.call "^[A-Z]"))

; Bare decorators `@observable` (a decorator with arguments is already a call).
(decorator [
  (identifier) @name.reference.call
  (member_expression property: (property_identifier) @name.reference.call)
])
