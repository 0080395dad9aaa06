; Solidity tags for hybridmap.
(contract_declaration name: (identifier) @name.definition.class) @definition.class
(interface_declaration name: (identifier) @name.definition.interface) @definition.interface
(library_declaration name: (identifier) @name.definition.module) @definition.module
(struct_declaration name: (identifier) @name.definition.struct) @definition.struct
(enum_declaration name: (identifier) @name.definition.enum) @definition.enum
(event_definition name: (identifier) @name.definition.type) @definition.type
(contract_body (function_definition name: (identifier) @name.definition.method) @definition.method)
(source_file (function_definition name: (identifier) @name.definition.function) @definition.function)
(modifier_definition name: (identifier) @name.definition.macro) @definition.macro
(state_variable_declaration name: (identifier) @name.definition.constant) @definition.constant

(call_expression function: (expression (identifier) @name.reference.call))
(call_expression function: (expression (member_expression property: (identifier) @name.reference.call)))
(emit_statement name: (expression (identifier) @name.reference.call))
(inheritance_specifier ancestor: (user_defined_type (identifier) @name.reference.class))
(type_name (user_defined_type (identifier) @name.reference.type))
