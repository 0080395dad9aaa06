; Python tags for hybridmap.
; This query runs over whole code bases (CPython's stdlib in the benchmark): a few patterns, and only
; what a repository map needs. Classes and functions local to a function body (test helpers, closures)
; are not tagged; module-level definitions inside `if` / `try` blocks are.

; Classes: at module level, nested in a class, or in a module-level `if` / `try`.
(module (class_definition name: (identifier) @name.definition.class) @definition.class)
(module (decorated_definition definition: (class_definition name: (identifier) @name.definition.class) @definition.class))
(class_definition body: (block (class_definition name: (identifier) @name.definition.class) @definition.class))
(class_definition body: (block (decorated_definition definition: (class_definition name: (identifier) @name.definition.class) @definition.class)))
(module [
  (if_statement [
    consequence: (block (class_definition name: (identifier) @name.definition.class) @definition.class)
    alternative: (_ (block (class_definition name: (identifier) @name.definition.class) @definition.class))
  ])
  (try_statement [
    body: (block (class_definition name: (identifier) @name.definition.class) @definition.class)
    (_ (block (class_definition name: (identifier) @name.definition.class) @definition.class))
  ])
])

; Functions: at module level or in a module-level `if` / `try`.
(module (function_definition name: (identifier) @name.definition.function) @definition.function)
(module (decorated_definition definition: (function_definition name: (identifier) @name.definition.function) @definition.function))
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

; Methods: functions directly in the body of one of those classes.
(module (class_definition body: (block (function_definition name: (identifier) @name.definition.method) @definition.method)))
(module (class_definition body: (block (decorated_definition definition: (function_definition name: (identifier) @name.definition.method) @definition.method))))
(module (decorated_definition definition: (class_definition body: (block (function_definition name: (identifier) @name.definition.method) @definition.method))))
(module (decorated_definition definition: (class_definition body: (block (decorated_definition definition: (function_definition name: (identifier) @name.definition.method) @definition.method)))))
(class_definition body: (block (class_definition body: (block [(function_definition name: (identifier) @name.definition.method) @definition.method (decorated_definition definition: (function_definition name: (identifier) @name.definition.method) @definition.method)]))))
(module [
  (if_statement [
    consequence: (block (class_definition body: (block [(function_definition name: (identifier) @name.definition.method) @definition.method (decorated_definition definition: (function_definition name: (identifier) @name.definition.method) @definition.method)])))
    alternative: (_ (block (class_definition body: (block [(function_definition name: (identifier) @name.definition.method) @definition.method (decorated_definition definition: (function_definition name: (identifier) @name.definition.method) @definition.method)]))))
  ])
  (try_statement [
    body: (block (class_definition body: (block [(function_definition name: (identifier) @name.definition.method) @definition.method (decorated_definition definition: (function_definition name: (identifier) @name.definition.method) @definition.method)])))
    (_ (block (class_definition body: (block [(function_definition name: (identifier) @name.definition.method) @definition.method (decorated_definition definition: (function_definition name: (identifier) @name.definition.method) @definition.method)]))))
  ])
])

; Module-level names: UPPER_CASE ones are constants, the rest variables (tuple targets are skipped).
(module
  (assignment left: (identifier) @name.definition.constant) @definition.constant
  (#match? @name.definition.constant "^_*[A-Z][A-Z0-9_]*$"))
(module
  (assignment left: (identifier) @name.definition.variable) @definition.variable
  (#not-match? @name.definition.variable "^_*[A-Z][A-Z0-9_]*$"))

; PEP 695 `type Alias = ...`
(module (type_alias_statement left: (type (identifier) @name.definition.type)) @definition.type)

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

; Where an imported name comes from (absolute imports only): the name as the file uses it, and
; its module (hybridmap.policies.external_imports).
(import_from_statement
  module_name: (dotted_name) @import.module
  name: (dotted_name (identifier) @import.name .))
(import_from_statement
  module_name: (dotted_name) @import.module
  name: (aliased_import alias: (identifier) @import.name))

; Annotations `x: Foo`, `-> Foo`.
(type (identifier) @name.reference.type)

; Bare decorators `@cache`, `@functools.cache` (a decorator with arguments is already a call).
(decorator [
  (identifier) @name.reference.call
  (attribute attribute: (identifier) @name.reference.call)
])
