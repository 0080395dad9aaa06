; Solidity tags for hybridmap

(contract_declaration name: (identifier) @name.definition.class) @definition.class
(interface_declaration name: (identifier) @name.definition.interface) @definition.interface
(library_declaration name: (identifier) @name.definition.module) @definition.module
(struct_declaration name: (identifier) @name.definition.struct) @definition.struct
(enum_declaration name: (identifier) @name.definition.enum) @definition.enum
(event_definition name: (identifier) @name.definition.type) @definition.type
(error_declaration name: (identifier) @name.definition.type) @definition.type
(user_defined_type_definition name: (identifier) @name.definition.type) @definition.type

; free functions vs. contract/library/interface members
(source_file
  (function_definition name: (identifier) @name.definition.function) @definition.function)

(contract_body
  (function_definition name: (identifier) @name.definition.method) @definition.method)

(contract_body
  (modifier_definition name: (identifier) @name.definition.method) @definition.method)

(contract_body
  (constructor_definition "constructor" @name.definition.constructor) @definition.constructor)

(contract_body
  (state_variable_declaration name: (identifier) @name.definition.field) @definition.field)

(source_file
  (constant_variable_declaration name: (identifier) @name.definition.constant) @definition.constant)

; references
(call_expression
  function: (expression (identifier) @name.reference.call)
  (#not-match? @name.reference.call "^(require|assert|revert|keccak256|sha256|ecrecover|address|payable|abi)$")) @reference.call

(call_expression
  function: (expression (member_expression property: (identifier) @name.reference.call))) @reference.call

(emit_statement name: (expression (identifier) @name.reference.call)) @reference.call

(modifier_invocation (identifier) @name.reference.call) @reference.call

(new_expression
  name: (type_name (user_defined_type (identifier) @name.reference.class))) @reference.class

(inheritance_specifier
  ancestor: (user_defined_type (identifier) @name.reference.class)) @reference.class

(type_name (user_defined_type (identifier) @name.reference.type)) @reference.type

(using_directive (type_alias (identifier) @name.reference.module)) @reference.module
