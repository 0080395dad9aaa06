; F# tags for hybridmap

(namespace name: (long_identifier) @name.definition.namespace) @definition.namespace
(named_module name: (long_identifier) @name.definition.module) @definition.module
(module_defn . (identifier) @name.definition.module) @definition.module

; types
(anon_type_defn (type_name type_name: (identifier) @name.definition.class)) @definition.class
(record_type_defn (type_name type_name: (identifier) @name.definition.struct)) @definition.struct
(union_type_defn (type_name type_name: (identifier) @name.definition.type)) @definition.type
(enum_type_defn (type_name type_name: (identifier) @name.definition.enum)) @definition.enum
(interface_type_defn (type_name type_name: (identifier) @name.definition.interface)) @definition.interface
(type_abbrev_defn (type_name type_name: (identifier) @name.definition.type)) @definition.type
(delegate_type_defn (type_name type_name: (identifier) @name.definition.type)) @definition.type

; members
(member_defn
  (method_or_prop_defn
    name: [(property_or_ident method: (identifier) @name.definition.method)
           (identifier) @name.definition.method])) @definition.method
(member_defn
  (member_signature . (identifier) @name.definition.method)) @definition.method
(additional_constr_defn "new" @name.definition.constructor) @definition.constructor

; module-level functions and values (not local lets); [<Literal>] values are constants
(file
  (declaration_expression
    (function_or_value_defn
      (function_declaration_left . (identifier) @name.definition.function)) @definition.function))
(file
  (declaration_expression
    .
    (function_or_value_defn
      (value_declaration_left
        (identifier_pattern (long_identifier_or_op (identifier) @name.definition.variable)))) @definition.variable))
(file
  (declaration_expression
    (attributes) @_attrs
    .
    (function_or_value_defn
      (value_declaration_left
        (identifier_pattern (long_identifier_or_op (identifier) @name.definition.constant)))) @definition.constant)
  (#match? @_attrs "Literal"))
(file
  (declaration_expression
    (attributes) @_attrs
    .
    (function_or_value_defn
      (value_declaration_left
        (identifier_pattern (long_identifier_or_op (identifier) @name.definition.variable)))) @definition.variable)
  (#not-match? @_attrs "Literal"))

(namespace
  (declaration_expression
    (function_or_value_defn
      (function_declaration_left . (identifier) @name.definition.function)) @definition.function))
(namespace
  (declaration_expression
    .
    (function_or_value_defn
      (value_declaration_left
        (identifier_pattern (long_identifier_or_op (identifier) @name.definition.variable)))) @definition.variable))
(namespace
  (declaration_expression
    (attributes) @_attrs
    .
    (function_or_value_defn
      (value_declaration_left
        (identifier_pattern (long_identifier_or_op (identifier) @name.definition.constant)))) @definition.constant)
  (#match? @_attrs "Literal"))
(namespace
  (declaration_expression
    (attributes) @_attrs
    .
    (function_or_value_defn
      (value_declaration_left
        (identifier_pattern (long_identifier_or_op (identifier) @name.definition.variable)))) @definition.variable)
  (#not-match? @_attrs "Literal"))

(named_module
  (declaration_expression
    (function_or_value_defn
      (function_declaration_left . (identifier) @name.definition.function)) @definition.function))
(named_module
  (declaration_expression
    .
    (function_or_value_defn
      (value_declaration_left
        (identifier_pattern (long_identifier_or_op (identifier) @name.definition.variable)))) @definition.variable))
(named_module
  (declaration_expression
    (attributes) @_attrs
    .
    (function_or_value_defn
      (value_declaration_left
        (identifier_pattern (long_identifier_or_op (identifier) @name.definition.constant)))) @definition.constant)
  (#match? @_attrs "Literal"))
(named_module
  (declaration_expression
    (attributes) @_attrs
    .
    (function_or_value_defn
      (value_declaration_left
        (identifier_pattern (long_identifier_or_op (identifier) @name.definition.variable)))) @definition.variable)
  (#not-match? @_attrs "Literal"))

(module_defn
  (declaration_expression
    (function_or_value_defn
      (function_declaration_left . (identifier) @name.definition.function)) @definition.function))
(module_defn
  (declaration_expression
    .
    (function_or_value_defn
      (value_declaration_left
        (identifier_pattern (long_identifier_or_op (identifier) @name.definition.variable)))) @definition.variable))
(module_defn
  (declaration_expression
    (attributes) @_attrs
    .
    (function_or_value_defn
      (value_declaration_left
        (identifier_pattern (long_identifier_or_op (identifier) @name.definition.constant)))) @definition.constant)
  (#match? @_attrs "Literal"))
(module_defn
  (declaration_expression
    (attributes) @_attrs
    .
    (function_or_value_defn
      (value_declaration_left
        (identifier_pattern (long_identifier_or_op (identifier) @name.definition.variable)))) @definition.variable)
  (#not-match? @_attrs "Literal"))

; references
(import_decl (long_identifier) @name.reference.module) @reference.module

(application_expression
  . (long_identifier_or_op (identifier) @name.reference.call)
  (#not-match? @name.reference.call "^(printf|printfn|sprintf|eprintfn|failwith|failwithf|ignore|raise|not|id|box|unbox|string|int|float)$")) @reference.call

(application_expression
  . (long_identifier_or_op (long_identifier (identifier) @name.reference.call .))) @reference.call

(typed_pattern (simple_type (long_identifier (identifier) @name.reference.type .))) @reference.type
(function_or_value_defn (simple_type (long_identifier (identifier) @name.reference.type .))) @reference.type
(typecast_expression (simple_type (long_identifier (identifier) @name.reference.type .))) @reference.type
(record_field (simple_type (long_identifier (identifier) @name.reference.type .))) @reference.type

(interface_implementation (simple_type (long_identifier (identifier) @name.reference.implementation .))) @reference.implementation
(class_inherits_decl (simple_type (long_identifier (identifier) @name.reference.class .))) @reference.class
(object_expression
  . (long_identifier_or_op [(identifier) @name.reference.implementation
                            (long_identifier (identifier) @name.reference.implementation .)])) @reference.implementation
