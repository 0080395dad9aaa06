; GDScript (Godot) tags for hybridmap.
; Every script is a class: `class_name X` names it, and its `func`s and `var`s are members of it, so
; functions are tagged as methods and member variables as fields (at script level and in inner classes).

; `class_name Inventory` (the script's global class name) and inner `class Item:`.
(class_name_statement name: (name) @name.definition.class) @definition.class
(class_definition name: (name) @name.definition.class) @definition.class

; `func f():` / `static func f():`; `_init` is the constructor.
(function_definition name: (name) @name.definition.method
  (#not-eq? @name.definition.method "_init")) @definition.method
(function_definition name: (name) @name.definition.constructor
  (#eq? @name.definition.constructor "_init")) @definition.constructor

; `signal changed(value)`: part of the class interface.
(signal_statement name: (name) @name.definition.field) @definition.field

; `enum Rarity { ... }` (anonymous enums are not tagged).
(enum_definition name: (name) @name.definition.enum) @definition.enum

; `const X = ...` at script level or in an inner class.
(source (const_statement name: (name) @name.definition.constant) @definition.constant)
(class_body (const_statement name: (name) @name.definition.constant) @definition.constant)

; Member variables (not locals inside function bodies).
(source [
  (variable_statement name: (name) @name.definition.field)
  (export_variable_statement name: (name) @name.definition.field)
  (onready_variable_statement name: (name) @name.definition.field)
] @definition.field)
(class_body [
  (variable_statement name: (name) @name.definition.field)
  (export_variable_statement name: (name) @name.definition.field)
  (onready_variable_statement name: (name) @name.definition.field)
] @definition.field)

; Calls `f()`, `obj.f()`, `super.f()`.
(call . (identifier) @name.reference.call)
(attribute_call . (identifier) @name.reference.call)
(base_call . (identifier) @name.reference.call)

; Instantiation `Foo.new()` / `Outer.Inner.new()`: the class right before `.new()`.
(attribute
  (identifier) @name.reference.class .
  (attribute_call . (identifier) @_new)
  (#eq? @_new "new"))

; Type annotations `x: Foo`, `-> Foo`, `x: Outer.Inner`, `Array[Foo]`, and `x as Foo` / `x is Foo`
; (built-in scalar types are skipped; `extends` types are matched below as classes).
(_ type: (type (identifier) @name.reference.type) (#not-match? @name.reference.type "^(void|bool|int|float|String|StringName|Variant|Array|Dictionary)$"))
(_ return_type: (type (identifier) @name.reference.type) (#not-match? @name.reference.type "^(void|bool|int|float|String|StringName|Variant|Array|Dictionary)$"))
(_ [type: (type (attribute (identifier) @name.reference.type .)) return_type: (type (attribute (identifier) @name.reference.type .))])
(_ type: (type (subscript arguments: (subscript_arguments (identifier) @name.reference.type))))
(binary_operator ["as" "is"] right: (identifier) @name.reference.type)

; Inheritance `extends Base` (script level) and `class Item extends Base:`.
(extends_statement (type (identifier) @name.reference.class))
