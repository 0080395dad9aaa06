; Julia tags for hybridmap.
(module_definition name: (identifier) @name.definition.module) @definition.module
(function_definition (signature (call_expression . (identifier) @name.definition.function))) @definition.function
(function_definition (signature (typed_expression (call_expression . (identifier) @name.definition.function)))) @definition.function
(assignment . (call_expression . (identifier) @name.definition.function)) @definition.function
(struct_definition (type_head (identifier) @name.definition.struct)) @definition.struct
(abstract_definition (type_head (identifier) @name.definition.type)) @definition.type
(const_statement (assignment . (identifier) @name.definition.constant)) @definition.constant

(call_expression . (identifier) @name.reference.call)
(call_expression . (field_expression (identifier) @name.reference.call .))
(typed_expression (identifier) . (identifier) @name.reference.type)
