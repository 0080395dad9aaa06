; Gleam tags for hybridmap

(type_definition (type_name name: (type_identifier) @name.definition.type)) @definition.type
(type_alias (type_name name: (type_identifier) @name.definition.type)) @definition.type
(data_constructor name: (constructor_name) @name.definition.constructor) @definition.constructor

(function name: (identifier) @name.definition.function) @definition.function
(external_function name: (identifier) @name.definition.function) @definition.function

(constant name: (identifier) @name.definition.constant) @definition.constant

; references
(import module: (module) @name.reference.module) @reference.module
(unqualified_import name: (_) @name.reference.type) @reference.type

(function_call function: (identifier) @name.reference.call) @reference.call
(function_call function: (field_access field: (label) @name.reference.call)) @reference.call

; pipes into a function value: x |> module.fun / x |> fun
(binary_expression
  operator: "|>"
  right: [
    (identifier) @name.reference.call
    (field_access field: (label) @name.reference.call)
  ]) @reference.call

(record name: (constructor_name) @name.reference.class) @reference.class
(record name: (remote_constructor_name (constructor_name) @name.reference.class)) @reference.class

(type name: (type_identifier) @name.reference.type) @reference.type
(type (remote_type_identifier name: (type_identifier) @name.reference.type)) @reference.type
