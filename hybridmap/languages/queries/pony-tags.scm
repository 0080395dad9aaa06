; Pony tags for hybridmap
(class_definition . (identifier) @name.definition.class) @definition.class
(actor_definition . (identifier) @name.definition.class) @definition.class
(primitive_definition . (identifier) @name.definition.class) @definition.class
(struct_definition . (identifier) @name.definition.struct) @definition.struct
(interface_definition . (identifier) @name.definition.interface) @definition.interface
(trait_definition . (identifier) @name.definition.trait) @definition.trait
(type_alias . (identifier) @name.definition.type) @definition.type
(method . (identifier) @name.definition.method) @definition.method
(method (capability) . (identifier) @name.definition.method) @definition.method
(behavior . (identifier) @name.definition.method) @definition.method
(behavior (capability) . (identifier) @name.definition.method) @definition.method
(constructor . (identifier) @name.definition.constructor) @definition.constructor
(constructor (capability) . (identifier) @name.definition.constructor) @definition.constructor
(field name: (identifier) @name.definition.field) @definition.field

(call_expression callee: (identifier) @name.reference.call)
(call_expression callee: (member_expression (identifier) @name.reference.call .))
(base_type name: (identifier) @name.reference.type)
(block (identifier) @name.reference.class (#match? @name.reference.class "^[A-Z]"))
(use_statement (string (string_content) @name.reference.module))
