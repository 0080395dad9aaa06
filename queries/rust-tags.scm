; Rust tags for hybridmap.
(source_file (function_item name: (identifier) @name.definition.function) @definition.function)
(mod_item body: (declaration_list (function_item name: (identifier) @name.definition.function) @definition.function))
(impl_item body: (declaration_list (function_item name: (identifier) @name.definition.method) @definition.method))
(trait_item body: (declaration_list (function_item name: (identifier) @name.definition.method) @definition.method))
(trait_item body: (declaration_list (function_signature_item name: (identifier) @name.definition.method) @definition.method))
(struct_item name: (type_identifier) @name.definition.struct) @definition.struct
(enum_item name: (type_identifier) @name.definition.enum) @definition.enum
(union_item name: (type_identifier) @name.definition.struct) @definition.struct
(trait_item name: (type_identifier) @name.definition.trait) @definition.trait
(type_item name: (type_identifier) @name.definition.type) @definition.type
(impl_item type: (type_identifier) @name.definition.implementation) @definition.implementation
(mod_item name: (identifier) @name.definition.module) @definition.module
(const_item name: (identifier) @name.definition.constant) @definition.constant
(static_item name: (identifier) @name.definition.constant) @definition.constant
(macro_definition name: (identifier) @name.definition.macro) @definition.macro

(call_expression function: (identifier) @name.reference.call)
(call_expression function: (field_expression field: (field_identifier) @name.reference.call))
(call_expression function: (scoped_identifier name: (identifier) @name.reference.call))
(macro_invocation macro: (identifier) @name.reference.call)
(struct_expression name: (type_identifier) @name.reference.class)
(impl_item trait: (type_identifier) @name.reference.implementation)
(type_arguments (type_identifier) @name.reference.type)
(parameter type: (type_identifier) @name.reference.type)
(reference_type type: (type_identifier) @name.reference.type)
(use_declaration argument: (scoped_identifier name: (identifier) @name.reference.module))
