; C++ tags for hybridmap.
; Queries cannot say "not inside a class body": free functions, prototypes and globals say where
; they count by the types of their ancestors, from the root down to the parent, joined by "/"
; (#hm-ancestors? fully matches them with a regular expression: hybridmap/languages/query_predicates.py).
; One pattern per kind, where one per parent took tree-sitter a second to compile.

; --- definitions ---------------------------------------------------------------

; Free functions defined outside classes (also templates, which wrap the definition): their
; parent is the file, a namespace body or a preprocessor block, or a template there.
((function_definition declarator: [
      (function_declarator declarator: (identifier) @name.definition.function)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name.definition.function))
      (reference_declarator (function_declarator declarator: (identifier) @name.definition.function))
    ]) @definition.function
  (#hm-ancestors? @definition.function "(.*/)?(translation_unit|declaration_list|preproc_ifdef|preproc_if|preproc_else|preproc_elif)(/template_declaration)?"))

; Methods defined inside the class body (`void f() {...}`; a constructor `Name(...) {...}` shows up as an identifier).
(field_declaration_list (function_definition declarator: [
      (function_declarator declarator: (field_identifier) @name.definition.method)
      (pointer_declarator declarator: (function_declarator declarator: (field_identifier) @name.definition.method))
      (reference_declarator (function_declarator declarator: (field_identifier) @name.definition.method))
    ]) @definition.method)
(field_declaration_list (template_declaration (function_definition declarator: [
      (function_declarator declarator: [(field_identifier) (identifier)] @name.definition.method)
      (pointer_declarator declarator: (function_declarator declarator: [(field_identifier) (identifier)] @name.definition.method))
      (reference_declarator (function_declarator declarator: [(field_identifier) (identifier)] @name.definition.method))
    ]) @definition.method))
(field_declaration_list (function_definition declarator: (function_declarator declarator: (identifier) @name.definition.constructor)) @definition.constructor)

; Out-of-line members `R Class::name(...) {...}`, `ns::Class::name`; `Class::Class` is a constructor.
(function_definition
  declarator: [
      (function_declarator declarator: [(qualified_identifier scope: (_) @_scope name: (identifier) @name.definition.method) (qualified_identifier name: (qualified_identifier scope: (_) @_scope name: (identifier) @name.definition.method))])
      (pointer_declarator declarator: (function_declarator declarator: [(qualified_identifier scope: (_) @_scope name: (identifier) @name.definition.method) (qualified_identifier name: (qualified_identifier scope: (_) @_scope name: (identifier) @name.definition.method))]))
      (reference_declarator (function_declarator declarator: [(qualified_identifier scope: (_) @_scope name: (identifier) @name.definition.method) (qualified_identifier name: (qualified_identifier scope: (_) @_scope name: (identifier) @name.definition.method))]))
    ]
  (#not-eq? @_scope @name.definition.method)) @definition.method
(function_definition
  declarator: (function_declarator declarator: [(qualified_identifier scope: (_) @_scope name: (identifier) @name.definition.constructor) (qualified_identifier name: (qualified_identifier scope: (_) @_scope name: (identifier) @name.definition.constructor))])
  (#eq? @_scope @name.definition.constructor)) @definition.constructor

; Member declarations in a class body: methods and constructors.
(field_declaration declarator: [
      (function_declarator declarator: (field_identifier) @name.definition.method)
      (pointer_declarator declarator: (function_declarator declarator: (field_identifier) @name.definition.method))
      (reference_declarator (function_declarator declarator: (field_identifier) @name.definition.method))
    ]) @definition.method
(field_declaration_list (declaration declarator: (function_declarator declarator: (identifier) @name.definition.constructor)) @definition.constructor)

; Function declarations (prototypes) at file or namespace level.
((declaration declarator: [
      (function_declarator declarator: (identifier) @name.definition.function)
      (pointer_declarator declarator: (function_declarator declarator: (identifier) @name.definition.function))
      (reference_declarator (function_declarator declarator: (identifier) @name.definition.function))
    ]) @definition.function
  (#hm-ancestors? @definition.function "(.*/)?(translation_unit|declaration_list|preproc_ifdef|preproc_if|preproc_else|preproc_elif)(/template_declaration)?"))

(class_specifier name: [(type_identifier) @name.definition.class (qualified_identifier name: (type_identifier) @name.definition.class)] body: (field_declaration_list)) @definition.class
(struct_specifier name: [(type_identifier) @name.definition.struct (qualified_identifier name: (type_identifier) @name.definition.struct)] body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name.definition.struct body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name.definition.enum body: (enumerator_list)) @definition.enum
(namespace_definition name: [(namespace_identifier) (nested_namespace_specifier)] @name.definition.namespace) @definition.namespace
(alias_declaration name: (type_identifier) @name.definition.type) @definition.type
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

; Global / namespace-level variables (not locals in function bodies).
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
  (#hm-ancestors? @definition.variable "(.*/)?(translation_unit|declaration_list|preproc_ifdef|preproc_if|preproc_else|preproc_elif)"))

; --- references ----------------------------------------------------------------

; Calls `f()`, `ns::f()`, `obj.m()`, `p->m()`, `f<T>()`.
(call_expression
  function: [
    (identifier) @name.reference.call
    (field_expression field: (field_identifier) @name.reference.call)
    (qualified_identifier name: [
      (identifier) @name.reference.call
      (template_function name: (identifier) @name.reference.call)
      (qualified_identifier name: (identifier) @name.reference.call)
    ])
    (template_function name: (identifier) @name.reference.call)
    (field_expression field: (template_method name: (field_identifier) @name.reference.call))
  ])

; `new T(...)`.
(new_expression
  type: [
    (type_identifier) @name.reference.class
    (template_type name: (type_identifier) @name.reference.class)
    (qualified_identifier name: [
      (type_identifier) @name.reference.class
      (template_type name: (type_identifier) @name.reference.class)
    ])
  ])

; Base classes `class A : public B, ns::C<T>`.
(base_class_clause [
  (type_identifier) @name.reference.class
  (template_type name: (type_identifier) @name.reference.class)
  (qualified_identifier name: [
    (type_identifier) @name.reference.class
    (template_type name: (type_identifier) @name.reference.class)
  ])
])

; Type uses (not the names being declared).
[
  (declaration type: (type_identifier) @name.reference.type)
  (parameter_declaration type: (type_identifier) @name.reference.type)
  (optional_parameter_declaration type: (type_identifier) @name.reference.type)
  (field_declaration type: (type_identifier) @name.reference.type)
  (function_definition type: (type_identifier) @name.reference.type)
  (type_descriptor type: (type_identifier) @name.reference.type)
  (type_definition type: (type_identifier) @name.reference.type)
  (template_type name: (type_identifier) @name.reference.type)
  (qualified_identifier name: (type_identifier) @name.reference.type)
  (struct_specifier name: (type_identifier) @name.reference.type !body)
  (class_specifier name: (type_identifier) @name.reference.type !body)
  (enum_specifier name: (type_identifier) @name.reference.type !body)
]

; `using ns::Name;`
(using_declaration (qualified_identifier name: (identifier) @name.reference.module))

; `#include "path"` / `#include <path>`: a module reference named by the included path (the
; angle brackets kept, so a system-style include is told apart). No symbol has such a name, so
; it adds no name-matched edge; hybridmap.pipeline.policies resolves it to a file (the include relation).
(preproc_include path: (string_literal (string_content) @name.reference.module))
(preproc_include path: (system_lib_string) @name.reference.module)

; An anonymous namespace, named by its keyword: what it encloses has internal linkage (file-local
; like `static`), which hybridmap.pipeline.policies reads from the enclosing symbol.
(namespace_definition !name "namespace" @name.definition.namespace body: (declaration_list)) @definition.namespace
