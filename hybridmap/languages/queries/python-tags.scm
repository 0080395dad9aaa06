; Python tags for hybridmap.
; This query runs over whole code bases (CPython's stdlib in the benchmark): a few patterns, and only
; what a repository map needs. Classes and functions local to a function body (test helpers, closures)
; are not tagged; module-level definitions inside `if` / `try` blocks are.

; Where a definition counts is said by the types of its ancestors, from the root down to its parent,
; joined by "/" (#hm-ancestors? fully matches them with a regular expression: hybridmap/languages/query_predicates.py).
; One pattern per kind instead of one per parent: tree-sitter compiles alternations of parents slowly.

; Classes: at module level, nested in a class, or in a module-level `if` / `try`.
((class_definition name: (identifier) @name.definition.class) @definition.class
  (#hm-ancestors? @definition.class "module(/decorated_definition)?|.*/class_definition/block(/decorated_definition)?|module/(if_statement|try_statement)(/[a-z_]+_clause)?/block"))

; Functions: at module level or in a module-level `if` / `try`.
((function_definition name: (identifier) @name.definition.function) @definition.function
  (#hm-ancestors? @definition.function "module(/decorated_definition)?|module/(if_statement|try_statement)(/[a-z_]+_clause)?/block"))

; Methods: functions directly in the body of one of those classes.
((function_definition name: (identifier) @name.definition.method) @definition.method
  (#hm-ancestors? @definition.method "module(/decorated_definition)?/class_definition/block(/decorated_definition)?|.*/class_definition/block/class_definition/block(/decorated_definition)?|module/(if_statement|try_statement)(/[a-z_]+_clause)?/block/class_definition/block(/decorated_definition)?"))

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

; Where an imported name comes from: the name as the file uses it, and its module, absolute or
; relative (`.console`, `..`; hybridmap.pipeline.python_imports, hybridmap.pipeline.import_targets);
; `from m import *` as the name `*` (a package's re-exports).
(import_from_statement
  module_name: [(dotted_name) (relative_import)] @import.module
  name: (dotted_name (identifier) @import.name .))
(import_from_statement
  module_name: [(dotted_name) (relative_import)] @import.module
  name: (aliased_import alias: (identifier) @import.name))
(import_from_statement
  module_name: [(dotted_name) (relative_import)] @import.module
  (wildcard_import) @import.star)

; Annotations `x: Foo`, `-> Foo`.
(type (identifier) @name.reference.type)

; Bare decorators `@cache`, `@functools.cache` (a decorator with arguments is already a call).
(decorator [
  (identifier) @name.reference.call
  (attribute attribute: (identifier) @name.reference.call)
])
