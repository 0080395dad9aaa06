; Python tags for hybridmap.
; Kept to a few patterns: this query runs over whole code bases (CPython's stdlib in the benchmark).

; Classes, wherever they are (module level, nested, decorated).
(class_definition
  name: (identifier) @name.definition.class) @definition.class

; Module-level functions (plain or decorated). Functions nested in functions are locals: not tagged.
(module
  (function_definition
    name: (identifier) @name.definition.function) @definition.function)
(module
  (decorated_definition
    definition: (function_definition
      name: (identifier) @name.definition.function) @definition.function))

; Module-level functions defined conditionally: `if sys.platform == ...: def f()`, `try: ... except ImportError: def f()`.
(module [
  (if_statement [
    consequence: (block (function_definition name: (identifier) @name.definition.function) @definition.function)
    alternative: (_ (block (function_definition name: (identifier) @name.definition.function) @definition.function))
  ])
  (try_statement [
    body: (block (function_definition name: (identifier) @name.definition.function) @definition.function)
    (_ (block (function_definition name: (identifier) @name.definition.function) @definition.function))
  ])
])

; Methods: functions directly in a class body (plain or decorated).
(class_definition
  body: (block
    (function_definition
      name: (identifier) @name.definition.method) @definition.method))
(class_definition
  body: (block
    (decorated_definition
      definition: (function_definition
        name: (identifier) @name.definition.method) @definition.method)))

; Module-level names: UPPER_CASE ones are constants, the rest variables.
(module
  (assignment
    left: (identifier) @name.definition.constant) @definition.constant
  (#match? @name.definition.constant "^_*[A-Z][A-Z0-9_]*$"))
(module
  (assignment
    left: (identifier) @name.definition.variable) @definition.variable
  (#not-match? @name.definition.variable "^_*[A-Z][A-Z0-9_]*$"))

; PEP 695 `type Alias = ...`
(module
  (type_alias_statement
    left: (type (identifier) @name.definition.type)) @definition.type)

; References: calls `f()` and `obj.meth()`.
(call
  function: [
    (identifier) @name.reference.call
    (attribute attribute: (identifier) @name.reference.call)
  ])

; Base classes `class A(Base, mod.Base)`.
(class_definition
  superclasses: (argument_list [
    (identifier) @name.reference.class
    (attribute attribute: (identifier) @name.reference.class)
  ]))

; `from x import Name` and `from x import Name as Alias`.
(import_from_statement
  name: [
    (dotted_name (identifier) @name.reference.module .)
    (aliased_import name: (dotted_name (identifier) @name.reference.module .))
  ])

; Annotations `x: Foo`, `-> Foo`.
(type (identifier) @name.reference.type)

; Bare decorators `@cache`, `@functools.cache` (a decorator with arguments is already a call).
(decorator [
  (identifier) @name.reference.call
  (attribute attribute: (identifier) @name.reference.call)
])
