; GLSL tags for hybridmap.
; Written standalone (not `; inherits: c`) so that GLSL's built-in types (vec3, mat4, sampler2D, ...)
; and constructor calls (`vec3(...)`) are not reported as references.
; GLSL has no methods/classes: structs, interface blocks, functions, macros and globals are what we tag.
; Only file-level declarations (also inside include guards / #if blocks) count as globals.

; --- definitions ---------------------------------------------------------------

(function_definition
  declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function

; Prototypes `vec3 f(vec3 p);` at file level.
[
  (translation_unit (declaration declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
  (preproc_ifdef (declaration declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
  (preproc_if (declaration declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
  (preproc_else (declaration declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
  (preproc_elif (declaration declarator: (function_declarator declarator: (identifier) @name.definition.function)) @definition.function)
]

(struct_specifier name: (type_identifier) @name.definition.struct body: (field_declaration_list)) @definition.struct

; Interface blocks `uniform Name { ... } inst;`, `buffer Name { ... };` (the block name; the grammar gives it no field).
(declaration (identifier) @name.definition.interface . (field_declaration_list)) @definition.interface

[
  (preproc_def name: (identifier) @name.definition.macro)
  (preproc_function_def name: (identifier) @name.definition.macro)
] @definition.macro

; File-level `const` declarations are constants; other globals (uniform / in / out / shared / buffer) variables.
([
  (translation_unit (declaration
    declarator: [
      (identifier) @name.definition.constant
      (array_declarator declarator: (identifier) @name.definition.constant)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.constant)
    ]) @definition.constant)
  (preproc_ifdef (declaration
    declarator: [
      (identifier) @name.definition.constant
      (array_declarator declarator: (identifier) @name.definition.constant)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.constant)
    ]) @definition.constant)
  (preproc_if (declaration
    declarator: [
      (identifier) @name.definition.constant
      (array_declarator declarator: (identifier) @name.definition.constant)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.constant)
    ]) @definition.constant)
  (preproc_else (declaration
    declarator: [
      (identifier) @name.definition.constant
      (array_declarator declarator: (identifier) @name.definition.constant)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.constant)
    ]) @definition.constant)
  (preproc_elif (declaration
    declarator: [
      (identifier) @name.definition.constant
      (array_declarator declarator: (identifier) @name.definition.constant)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.constant)
    ]) @definition.constant)
]
  (#match? @definition.constant "^const\\s"))

([
  (translation_unit (declaration
    declarator: [
      (identifier) @name.definition.variable
      (array_declarator declarator: (identifier) @name.definition.variable)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.variable)
    ]) @definition.variable)
  (preproc_ifdef (declaration
    declarator: [
      (identifier) @name.definition.variable
      (array_declarator declarator: (identifier) @name.definition.variable)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.variable)
    ]) @definition.variable)
  (preproc_if (declaration
    declarator: [
      (identifier) @name.definition.variable
      (array_declarator declarator: (identifier) @name.definition.variable)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.variable)
    ]) @definition.variable)
  (preproc_else (declaration
    declarator: [
      (identifier) @name.definition.variable
      (array_declarator declarator: (identifier) @name.definition.variable)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.variable)
    ]) @definition.variable)
  (preproc_elif (declaration
    declarator: [
      (identifier) @name.definition.variable
      (array_declarator declarator: (identifier) @name.definition.variable)
      (init_declarator declarator: [(identifier) (array_declarator declarator: (identifier))] @name.definition.variable)
    ]) @definition.variable)
]
  (#not-match? @definition.variable "^const\\s"))

; --- references ----------------------------------------------------------------

; Calls to user functions and struct constructors (`PointLight(...)`), not built-in type constructors.
(call_expression
  function: (identifier) @name.reference.call
  (#not-match? @name.reference.call "^([biud]?vec[234]|d?mat[234](x[234])?|float|double|int|uint|bool)$"))

; Uses of user types (structs); built-in vector/matrix/opaque types are skipped.
([
  (declaration type: (type_identifier) @name.reference.type)
  (parameter_declaration type: (type_identifier) @name.reference.type)
  (field_declaration type: (type_identifier) @name.reference.type)
  (function_definition type: (type_identifier) @name.reference.type)
  (struct_specifier name: (type_identifier) @name.reference.type !body)
]
  (#not-match? @name.reference.type "^([biud]?vec[234]|d?mat[234](x[234])?|[iu]?(sampler|image|texture|subpassInput)[A-Za-z0-9]*|sampler|samplerShadow|atomic_uint|accelerationStructure(EXT|NV)|rayQueryEXT)$"))
