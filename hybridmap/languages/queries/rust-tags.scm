; Rust tags for hybridmap.

; --- definitions ---------------------------------------------------------------

; Free functions: at file level, in inline modules and in `extern` blocks (not fns local to a fn body).
(source_file (function_item name: (identifier) @name.definition.function) @definition.function)
(mod_item body: (declaration_list
  (function_item name: (identifier) @name.definition.function) @definition.function))
(foreign_mod_item body: (declaration_list
  (function_signature_item name: (identifier) @name.definition.function) @definition.function))

; Methods: fns in `impl` blocks and trait declarations.
(impl_item body: (declaration_list
  (function_item name: (identifier) @name.definition.method) @definition.method))
(trait_item body: (declaration_list [
  (function_item name: (identifier) @name.definition.method) @definition.method
  (function_signature_item name: (identifier) @name.definition.method) @definition.method
]))

(struct_item name: (type_identifier) @name.definition.struct) @definition.struct
(union_item name: (type_identifier) @name.definition.struct) @definition.struct
(enum_item name: (type_identifier) @name.definition.enum) @definition.enum
(trait_item name: (type_identifier) @name.definition.trait) @definition.trait
(type_item name: (type_identifier) @name.definition.type) @definition.type

; `impl Type` / `impl Trait for Type<T>`: named after the implementing type.
(impl_item
  type: [
    (type_identifier) @name.definition.implementation
    (generic_type type: (type_identifier) @name.definition.implementation)
    (scoped_type_identifier name: (type_identifier) @name.definition.implementation)
  ]) @definition.implementation

; Inline modules `mod m { ... }` (a bodiless `mod m;` is a reference to the file m.rs).
(mod_item name: (identifier) @name.definition.module body: (declaration_list)) @definition.module

[
  (const_item name: (identifier) @name.definition.constant)
  (static_item name: (identifier) @name.definition.constant)
] @definition.constant

(macro_definition name: (identifier) @name.definition.macro) @definition.macro

; --- references ----------------------------------------------------------------

; Calls `f()`, `x.method()`, `path::f()`, `f::<T>()`, and the `Type` in `Type::new()`.
(call_expression
  function: [
    (identifier) @name.reference.call
    (field_expression field: (field_identifier) @name.reference.call)
    (scoped_identifier name: (identifier) @name.reference.call)
    (generic_function function: [
      (identifier) @name.reference.call
      (field_expression field: (field_identifier) @name.reference.call)
      (scoped_identifier name: (identifier) @name.reference.call)
    ])
  ])
(call_expression
  function: (scoped_identifier path: (identifier) @name.reference.type)
  (#match? @name.reference.type "^[A-Z]"))

(macro_invocation
  macro: [
    (identifier) @name.reference.call
    (scoped_identifier name: (identifier) @name.reference.call)
  ])

; Calls inside macro arguments, e.g. `println!("{}", x.describe())`: the grammar leaves macro
; arguments as flat token trees, so take an identifier directly followed by `( ... )`.
(token_tree
  (identifier) @name.reference.call
  .
  (token_tree) @_args
  (#match? @_args "^[(]"))

; Instantiation `Type { .. }`.
(struct_expression
  name: [
    (type_identifier) @name.reference.class
    (scoped_type_identifier name: (type_identifier) @name.reference.class)
  ])

; `impl Trait for Type`.
(impl_item
  trait: [
    (type_identifier) @name.reference.implementation
    (scoped_type_identifier name: (type_identifier) @name.reference.implementation)
    (generic_type type: (type_identifier) @name.reference.implementation)
  ])

; Type uses (not the names being declared); the type an `impl` is for counts as a use too.
[
  (impl_item type: (type_identifier) @name.reference.type)
  (parameter type: (type_identifier) @name.reference.type)
  (reference_type type: (type_identifier) @name.reference.type)
  (pointer_type type: (type_identifier) @name.reference.type)
  (generic_type type: (type_identifier) @name.reference.type)
  (type_arguments (type_identifier) @name.reference.type)
  (scoped_type_identifier name: (type_identifier) @name.reference.type)
  (let_declaration type: (type_identifier) @name.reference.type)
  (function_item return_type: (type_identifier) @name.reference.type)
  (function_signature_item return_type: (type_identifier) @name.reference.type)
  (field_declaration type: (type_identifier) @name.reference.type)
  (ordered_field_declaration_list type: (type_identifier) @name.reference.type)
  (array_type element: (type_identifier) @name.reference.type)
  (tuple_type (type_identifier) @name.reference.type)
  (trait_bounds (type_identifier) @name.reference.type)
  (dynamic_type trait: (type_identifier) @name.reference.type)
  (abstract_type trait: (type_identifier) @name.reference.type)
  (type_item type: (type_identifier) @name.reference.type)
  (const_item type: (type_identifier) @name.reference.type)
  (static_item type: (type_identifier) @name.reference.type)
  (type_cast_expression type: (type_identifier) @name.reference.type)
]

; Imports `use a::b::Name;`, `use a::{B, c::D as E};` and bodiless `mod m;`.
(use_declaration argument: (scoped_identifier name: (identifier) @name.reference.module))
(use_list [
  (identifier) @name.reference.module
  (scoped_identifier name: (identifier) @name.reference.module)
])
(use_as_clause path: [
  (identifier) @name.reference.module
  (scoped_identifier name: (identifier) @name.reference.module)
])
(mod_item name: (identifier) @name.reference.module !body)
