; Java tags for hybridmap.

; --- definitions ---------------------------------------------------------------

(class_declaration name: (identifier) @name.definition.class) @definition.class
(record_declaration name: (identifier) @name.definition.class) @definition.class
(interface_declaration name: (identifier) @name.definition.interface) @definition.interface
(annotation_type_declaration name: (identifier) @name.definition.interface) @definition.interface
(enum_declaration name: (identifier) @name.definition.enum) @definition.enum

(method_declaration name: (identifier) @name.definition.method) @definition.method
(annotation_type_element_declaration name: (identifier) @name.definition.method) @definition.method
[
  (constructor_declaration name: (identifier) @name.definition.constructor)
  (compact_constructor_declaration name: (identifier) @name.definition.constructor)
] @definition.constructor

; Fields: UPPER_CASE names (by convention `static final`) are constants, interface fields always are.
(field_declaration
  declarator: (variable_declarator name: (identifier) @name.definition.constant)
  (#match? @name.definition.constant "^[A-Z][A-Z0-9_]*$")) @definition.constant
(field_declaration
  declarator: (variable_declarator name: (identifier) @name.definition.field)
  (#not-match? @name.definition.field "^[A-Z][A-Z0-9_]*$")) @definition.field
(constant_declaration
  declarator: (variable_declarator name: (identifier) @name.definition.constant)) @definition.constant

; --- references ----------------------------------------------------------------

(method_invocation name: (identifier) @name.reference.call)

; `new T()`, `new pkg.T<>()`.
(object_creation_expression type: [(type_identifier) @name.reference.class (generic_type . (type_identifier) @name.reference.class) (scoped_type_identifier (type_identifier) @name.reference.class .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.class .))])

; `extends Base`, `implements I, J`; an interface's `extends`.
(superclass [(type_identifier) @name.reference.class (generic_type . (type_identifier) @name.reference.class) (scoped_type_identifier (type_identifier) @name.reference.class .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.class .))])
(super_interfaces (type_list [(type_identifier) @name.reference.implementation (generic_type . (type_identifier) @name.reference.implementation) (scoped_type_identifier (type_identifier) @name.reference.implementation .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.implementation .))]))
(extends_interfaces (type_list [(type_identifier) @name.reference.class (generic_type . (type_identifier) @name.reference.class) (scoped_type_identifier (type_identifier) @name.reference.class .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.class .))]))

; Type uses (not the names being declared).
[
  (field_declaration type: [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (constant_declaration type: [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (formal_parameter type: [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (spread_parameter [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (catch_type [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (local_variable_declaration type: [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (method_declaration type: [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (annotation_type_element_declaration type: [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (type_arguments [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (array_type element: [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (array_creation_expression type: [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (throws [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (cast_expression type: [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (instanceof_expression right: [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (type_bound [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (enhanced_for_statement type: [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (resource type: [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
  (class_literal [(type_identifier) @name.reference.type (generic_type . (type_identifier) @name.reference.type) (scoped_type_identifier (type_identifier) @name.reference.type .) (generic_type . (scoped_type_identifier (type_identifier) @name.reference.type .))])
]

; Annotations `@Entity`, `@Table(name = "x")`.
(marker_annotation name: (identifier) @name.reference.type)
(annotation name: (identifier) @name.reference.type)

; `import pkg.Name;`, `import static pkg.Util.name;`
(import_declaration (scoped_identifier name: (identifier) @name.reference.module))
; Where an imported class comes from: its name and the whole dotted name (`a.b.C`: `a/b/C.java`,
; hybridmap.pipeline.import_targets); `import a.b.*;` and `import static` name no file of their own.
(import_declaration (scoped_identifier name: (identifier) @import.name) @import.module .)
