; C tags for hybridmap.

; --- definitions ---------------------------------------------------------------

; Function definitions `int f(...) {}`, `char *f(...) {}`, `char **f(...) {}`.
(function_definition
  declarator: [
    (function_declarator declarator: (identifier) @name.definition.function)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name.definition.function))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name.definition.function)))
  ]) @definition.function

; Function declarations (prototypes, mostly in headers).
(declaration
  declarator: [
    (function_declarator declarator: (identifier) @name.definition.function)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name.definition.function))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name.definition.function)))
  ]) @definition.function

(struct_specifier name: (type_identifier) @name.definition.struct body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name.definition.struct body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name.definition.enum body: (enumerator_list)) @definition.enum

; typedefs, including function-pointer types `typedef int (*cb_t)(int);`.
(type_definition
  declarator: [
    (type_identifier) @name.definition.type
    (pointer_declarator declarator: (type_identifier) @name.definition.type)
    (function_declarator declarator: (parenthesized_declarator (pointer_declarator declarator: (type_identifier) @name.definition.type)))
  ]) @definition.type

[
  (preproc_def name: (identifier) @name.definition.macro)
  (preproc_function_def name: (identifier) @name.definition.macro)
] @definition.macro

; Global variables: declarations at file level, also inside `#ifdef` / `#if` blocks (headers),
; not locals in function bodies: their ancestors' types, from the root down to the parent, joined
; by "/" (#hm-ancestors? fully matches them: hybridmap/languages/query_predicates.py), end in one of those.
((declaration
    declarator: [
      (identifier) @name.definition.variable
      (array_declarator declarator: (identifier) @name.definition.variable)
      (pointer_declarator declarator: (identifier) @name.definition.variable)
      (init_declarator declarator: [
        (identifier) @name.definition.variable
        (array_declarator declarator: (identifier) @name.definition.variable)
        (pointer_declarator declarator: [(identifier) @name.definition.variable (array_declarator declarator: (identifier) @name.definition.variable)])
      ])
    ]) @definition.variable
  (#hm-ancestors? @definition.variable "(.*/)?(translation_unit|preproc_ifdef|preproc_if|preproc_else|preproc_elif)"))

; --- references ----------------------------------------------------------------

(call_expression
  function: [
    (identifier) @name.reference.call
    (field_expression field: (field_identifier) @name.reference.call)
  ])

; Type uses: `foo_t x`, `struct foo *p`, casts and sizeof (not the names being declared).
[
  (declaration type: (type_identifier) @name.reference.type)
  (parameter_declaration type: (type_identifier) @name.reference.type)
  (field_declaration type: (type_identifier) @name.reference.type)
  (function_definition type: (type_identifier) @name.reference.type)
  (type_descriptor type: (type_identifier) @name.reference.type)
  (type_definition type: (type_identifier) @name.reference.type)
  (struct_specifier name: (type_identifier) @name.reference.type !body)
  (union_specifier name: (type_identifier) @name.reference.type !body)
  (enum_specifier name: (type_identifier) @name.reference.type !body)
]

; `#include "path"` / `#include <path>`: a module reference named by the included path (the
; angle brackets kept, so a system-style include is told apart). No symbol has such a name, so
; it adds no name-matched edge; hybridmap.pipeline.policies resolves it to a file (the include relation).
(preproc_include path: (string_literal (string_content) @name.reference.module))
(preproc_include path: (system_lib_string) @name.reference.module)
