; GraphQL tags for hybridmap (schemas and executable documents)

; ---- definitions: type system ----------------------------------------------

(object_type_definition
  (name) @name.definition.class) @definition.class

(interface_type_definition
  (name) @name.definition.interface) @definition.interface

(input_object_type_definition
  (name) @name.definition.struct) @definition.struct

(enum_type_definition
  (name) @name.definition.enum) @definition.enum

(union_type_definition
  (name) @name.definition.type) @definition.type

(scalar_type_definition
  (name) @name.definition.type) @definition.type

(directive_definition
  (name) @name.definition.macro) @definition.macro

; `extend type X { ... }` adds to an existing type
[
  (object_type_extension (name) @name.definition.implementation)
  (interface_type_extension (name) @name.definition.implementation)
  (input_object_type_extension (name) @name.definition.implementation)
  (enum_type_extension (name) @name.definition.implementation)
  (union_type_extension (name) @name.definition.implementation)
] @definition.implementation

; fields of object / interface types and of input types
(fields_definition
  (field_definition
    (name) @name.definition.field) @definition.field)

(input_fields_definition
  (input_value_definition
    (name) @name.definition.field) @definition.field)

; ---- definitions: executable documents -------------------------------------

(operation_definition
  (name) @name.definition.function) @definition.function

(fragment_definition
  (fragment_name (name) @name.definition.function)) @definition.function

; ---- references ------------------------------------------------------------

; type uses in fields, arguments, variables, unions and fragment conditions
; (built-in scalars are skipped)
([
  (type (named_type (name) @name.reference.type))
  (non_null_type (named_type (name) @name.reference.type))
  (union_member_types (named_type (name) @name.reference.type))
  (type_condition (named_type (name) @name.reference.type))
 ]
 (#not-match? @name.reference.type "^(ID|String|Int|Float|Boolean)$"))

(implements_interfaces
  (named_type (name) @name.reference.implementation)) @reference.implementation

; ...FragmentName
(fragment_spread
  (fragment_name (name) @name.reference.call)) @reference.call

; @directive(...) uses
(directive
  (name) @name.reference.call) @reference.call

; root fields selected by an operation (query { book { ... } } -> Query.book)
(operation_definition
  (selection_set
    (selection
      (field (name) @name.reference.call) @reference.call)))
