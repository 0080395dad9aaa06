; Go tags for hybridmap.
(function_declaration name: (identifier) @name.definition.function) @definition.function
(method_declaration name: (field_identifier) @name.definition.method) @definition.method
(type_spec name: (type_identifier) @name.definition.struct type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name.definition.interface type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name.definition.type type: [(type_identifier) (qualified_type) (function_type) (map_type) (slice_type) (array_type) (pointer_type) (channel_type) (generic_type)]) @definition.type
(source_file (const_declaration (const_spec name: (identifier) @name.definition.constant) @definition.constant))
(source_file (var_declaration (var_spec name: (identifier) @name.definition.variable) @definition.variable))
(method_elem name: (field_identifier) @name.definition.method) @definition.method

(call_expression function: (identifier) @name.reference.call)
(call_expression function: (selector_expression field: (field_identifier) @name.reference.call))
(composite_literal type: (type_identifier) @name.reference.class)
(composite_literal type: (qualified_type name: (type_identifier) @name.reference.class))
(qualified_type name: (type_identifier) @name.reference.type)
(parameter_declaration type: (type_identifier) @name.reference.type)
(pointer_type (type_identifier) @name.reference.type)
