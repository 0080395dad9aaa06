; V tags for hybridmap

(module_clause (module_identifier) @name.definition.module) @definition.module

; fn name() / fn (r Recv) name()
(function_declaration
  . name: (identifier) @name.definition.function) @definition.function
(function_declaration
  receiver: (parameter_list)
  name: (identifier) @name.definition.method) @definition.method

(struct_declaration name: (type_identifier) @name.definition.struct) @definition.struct
(enum_declaration name: (type_identifier) @name.definition.enum) @definition.enum
(interface_declaration name: (type_identifier) @name.definition.interface) @definition.interface
(interface_spec name: (field_identifier) @name.definition.method) @definition.method
(type_declaration name: (type_identifier) @name.definition.type) @definition.type

(source_file
  (const_declaration (const_spec name: (identifier) @name.definition.constant) @definition.constant))
(global_var_declaration (global_var_type_initializer name: (identifier) @name.definition.variable) @definition.variable)

; references
(import_declaration path: (import_path) @name.reference.module) @reference.module

(call_expression
  function: (identifier) @name.reference.call
  (#not-match? @name.reference.call "^(println|print|eprintln|eprint|panic|dump|exit|assert)$")) @reference.call
(call_expression
  function: (selector_expression field: (identifier) @name.reference.call)) @reference.call

(type_initializer type: (type_identifier) @name.reference.class) @reference.class
(type_initializer type: (qualified_type name: (type_identifier) @name.reference.class)) @reference.class
(selector_expression field: (type_identifier) @name.reference.class) @reference.class

(parameter_declaration type: (type_identifier) @name.reference.type) @reference.type
(parameter_declaration type: (qualified_type name: (type_identifier) @name.reference.type)) @reference.type
(function_declaration result: (type_identifier) @name.reference.type) @reference.type
(function_declaration result: (qualified_type name: (type_identifier) @name.reference.type)) @reference.type
(struct_field_declaration type: (type_identifier) @name.reference.type) @reference.type
(struct_field_declaration type: (qualified_type name: (type_identifier) @name.reference.type)) @reference.type
