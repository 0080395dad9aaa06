; C# tags for hybridmap.

; --- definitions ---------------------------------------------------------------

[
  (class_declaration name: (identifier) @name.definition.class)
  (record_declaration name: (identifier) @name.definition.class)
] @definition.class
(struct_declaration name: (identifier) @name.definition.struct) @definition.struct
(interface_declaration name: (identifier) @name.definition.interface) @definition.interface
(enum_declaration name: (identifier) @name.definition.enum) @definition.enum
(delegate_declaration name: (identifier) @name.definition.type) @definition.type
[
  (namespace_declaration name: [(identifier) (qualified_name)] @name.definition.namespace)
  (file_scoped_namespace_declaration name: [(identifier) (qualified_name)] @name.definition.namespace)
] @definition.namespace

(method_declaration name: (identifier) @name.definition.method) @definition.method
(constructor_declaration name: (identifier) @name.definition.constructor) @definition.constructor
(property_declaration name: (identifier) @name.definition.property) @definition.property

; Fields: `const` ones are constants (checked on the declaration's text before any `=`).
((field_declaration
   (variable_declaration (variable_declarator name: (identifier) @name.definition.constant))) @definition.constant
  (#match? @definition.constant "^[^=]*\\bconst\\b"))
((field_declaration
   (variable_declaration (variable_declarator name: (identifier) @name.definition.field))) @definition.field
  (#not-match? @definition.field "^[^=]*\\bconst\\b"))

; --- references ----------------------------------------------------------------

; Calls `F()`, `obj.M()`, `F<T>()`, `obj.M<T>()`.
(invocation_expression
  function: [
    (identifier) @name.reference.call
    (generic_name . (identifier) @name.reference.call)
    (member_access_expression name: [
      (identifier) @name.reference.call
      (generic_name . (identifier) @name.reference.call)
    ])
  ])

; `new T(...)`.
(object_creation_expression type: [(identifier) @name.reference.class (generic_name . (identifier) @name.reference.class) (qualified_name name: [(identifier) @name.reference.class (generic_name . (identifier) @name.reference.class)])])

; Base types: by .NET convention `IName` is an interface.
(base_list [(identifier) @name.reference.implementation (generic_name . (identifier) @name.reference.implementation) (qualified_name name: [(identifier) @name.reference.implementation (generic_name . (identifier) @name.reference.implementation)])]
  (#match? @name.reference.implementation "^I[A-Z]"))
(base_list [(identifier) @name.reference.class (generic_name . (identifier) @name.reference.class) (qualified_name name: [(identifier) @name.reference.class (generic_name . (identifier) @name.reference.class)])]
  (#not-match? @name.reference.class "^I[A-Z]"))

; Type uses (not the names being declared).
[
  (variable_declaration type: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (parameter type: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (method_declaration returns: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (local_function_statement type: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (property_declaration type: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (indexer_declaration type: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (delegate_declaration type: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (type_argument_list [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (array_type type: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (nullable_type type: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (type_parameter_constraint type: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (cast_expression type: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (typeof_expression type: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (declaration_pattern type: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (catch_declaration type: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (foreach_statement type: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (as_expression right: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
  (is_expression right: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type) (qualified_name name: [(identifier) @name.reference.type (generic_name . (identifier) @name.reference.type)])])
]

; Attributes `[Serializable]`, `[HttpGet("x")]`.
(attribute name: [(identifier) @name.reference.type (qualified_name name: (identifier) @name.reference.type)])

; `using Shop.Core;` (matches a `namespace Shop.Core` definition).
(using_directive !name [(identifier) (qualified_name)] @name.reference.module)
