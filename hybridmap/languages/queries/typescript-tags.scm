; TypeScript tags for hybridmap.
; typescript-tags.scm and tsx-tags.scm are the same query except for JSX (tsx) and `<T>x` casts (typescript).
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

; ... and in namespaces `namespace N { export function f() {} }`.
(internal_module body: (statement_block [
  (function_declaration name: (identifier) @name.definition.function) @definition.function
  (generator_function_declaration name: (identifier) @name.definition.function) @definition.function
  (export_statement declaration: [
    (function_declaration name: (identifier) @name.definition.function)
    (generator_function_declaration name: (identifier) @name.definition.function)
  ] @definition.function)
]))

; Declarations `declare function f(): T;` and overload signatures.
(function_signature name: (identifier) @name.definition.function) @definition.function

[
  (class_declaration name: (type_identifier) @name.definition.class)
  (abstract_class_declaration name: (type_identifier) @name.definition.class)
] @definition.class

(interface_declaration name: (type_identifier) @name.definition.interface) @definition.interface
(type_alias_declaration name: (type_identifier) @name.definition.type) @definition.type
(enum_declaration name: (identifier) @name.definition.enum) @definition.enum
(internal_module name: [(identifier) (nested_identifier)] @name.definition.namespace) @definition.namespace

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name.definition.method
  (#not-eq? @name.definition.method "constructor")) @definition.method
(method_definition
  name: (property_identifier) @name.definition.constructor
  (#eq? @name.definition.constructor "constructor")) @definition.constructor
(abstract_method_signature name: (property_identifier) @name.definition.method) @definition.method

(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name.definition.field) @definition.field

; Interface members.
(interface_body [
  (method_signature name: (property_identifier) @name.definition.method) @definition.method
  (property_signature name: (property_identifier) @name.definition.property) @definition.property
])

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

; Other top-level `const NAME = value` are constants (`require()` results are imports, not constants).
(program [
  (lexical_declaration kind: "const" (variable_declarator
    name: (identifier) @name.definition.constant
    value: [
      (number) (string) (template_string) (regex) (true) (false) (null) (undefined)
      (object) (array) (identifier) (member_expression) (subscript_expression) (new_expression)
      (binary_expression) (unary_expression) (ternary_expression) (parenthesized_expression)
      (await_expression) (as_expression) (satisfies_expression) (non_null_expression) (type_assertion)
      (call_expression function: (_) @_callee)
    ]) @definition.constant)
  (export_statement declaration: (lexical_declaration kind: "const" (variable_declarator
    name: (identifier) @name.definition.constant
    value: [
      (number) (string) (template_string) (regex) (true) (false) (null) (undefined)
      (object) (array) (identifier) (member_expression) (subscript_expression) (new_expression)
      (binary_expression) (unary_expression) (ternary_expression) (parenthesized_expression)
      (await_expression) (as_expression) (satisfies_expression) (non_null_expression) (type_assertion)
      (call_expression function: (_) @_callee)
    ]) @definition.constant))
]
  (#not-eq? @_callee "require"))

; Top-level `let` / `var` are variables.
(program [
  (lexical_declaration kind: "let" (variable_declarator
    name: (identifier) @name.definition.variable
    value: [
      (number) (string) (template_string) (regex) (true) (false) (null) (undefined)
      (object) (array) (identifier) (member_expression) (subscript_expression) (new_expression)
      (binary_expression) (unary_expression) (ternary_expression) (parenthesized_expression)
      (await_expression) (as_expression) (satisfies_expression) (non_null_expression) (type_assertion)
      (call_expression)
    ]) @definition.variable)
  (variable_declaration (variable_declarator
    name: (identifier) @name.definition.variable
    value: [
      (number) (string) (template_string) (regex) (true) (false) (null) (undefined)
      (object) (array) (identifier) (member_expression) (subscript_expression) (new_expression)
      (binary_expression) (unary_expression) (ternary_expression) (parenthesized_expression)
      (await_expression) (as_expression) (satisfies_expression) (non_null_expression) (type_assertion)
      (call_expression)
    ]) @definition.variable)
  (export_statement declaration: (lexical_declaration kind: "let" (variable_declarator
    name: (identifier) @name.definition.variable
    value: [
      (number) (string) (template_string) (regex) (true) (false) (null) (undefined)
      (object) (array) (identifier) (member_expression) (subscript_expression) (new_expression)
      (binary_expression) (unary_expression) (ternary_expression) (parenthesized_expression)
      (await_expression) (as_expression) (satisfies_expression) (non_null_expression) (type_assertion)
      (call_expression)
    ]) @definition.variable))
])

; Ambient declarations (.d.ts): `declare const X: T`, `declare var y: T`.
(program [
  (ambient_declaration (lexical_declaration kind: "const"
    (variable_declarator name: (identifier) @name.definition.constant) @definition.constant))
  (export_statement declaration: (ambient_declaration (lexical_declaration kind: "const"
    (variable_declarator name: (identifier) @name.definition.constant) @definition.constant)))
])
(program [
  (ambient_declaration (variable_declaration
    (variable_declarator name: (identifier) @name.definition.variable) @definition.variable))
  (export_statement declaration: (ambient_declaration (variable_declaration
    (variable_declarator name: (identifier) @name.definition.variable) @definition.variable)))
])

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

; `class A extends B`, `interface I extends J`.
(extends_clause value: [
  (identifier) @name.reference.class
  (member_expression property: (property_identifier) @name.reference.class)
])
(extends_type_clause type: (type_identifier) @name.reference.class)
; `class A implements I` (a generic `J<T>` is a type use below).
(implements_clause (type_identifier) @name.reference.implementation)

; Type uses (not the names being declared).
[
  (type_annotation (type_identifier) @name.reference.type)
  (type_arguments (type_identifier) @name.reference.type)
  (generic_type name: (type_identifier) @name.reference.type)
  (nested_type_identifier name: (type_identifier) @name.reference.type)
  (union_type (type_identifier) @name.reference.type)
  (intersection_type (type_identifier) @name.reference.type)
  (array_type (type_identifier) @name.reference.type)
  (tuple_type (type_identifier) @name.reference.type)
  (function_type return_type: (type_identifier) @name.reference.type)
  (constraint (type_identifier) @name.reference.type)
  (type_alias_declaration value: (type_identifier) @name.reference.type)
  (as_expression (type_identifier) @name.reference.type)
  (satisfies_expression (type_identifier) @name.reference.type)
]

(import_specifier name: (identifier) @name.reference.module)
(import_clause (identifier) @name.reference.module)

; Bare decorators `@Injectable` (a decorator with arguments is already a call).
(decorator [
  (identifier) @name.reference.call
  (member_expression property: (property_identifier) @name.reference.call)
])
