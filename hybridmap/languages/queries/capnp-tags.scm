; Cap'n Proto tags for hybridmap. Qualified type uses (Cart.Item) are one token in this grammar,
; so only unqualified uses and `using import "x".Name` link to the definition.
(struct . (type_identifier) @name.definition.struct) @definition.struct
(interface . (type_identifier) @name.definition.interface) @definition.interface
(enum . (enum_identifier) @name.definition.enum) @definition.enum
(const . (const_identifier) @name.definition.constant) @definition.constant
(method . (method_identifier) @name.definition.method) @definition.method
(field . (field_identifier) @name.definition.field) @definition.field
(annotation . (annotation_identifier) @name.definition.type) @definition.type

(custom_type (type_identifier) @name.reference.type)
(extend_type) @name.reference.implementation
(import_using (import_path) . (type_identifier) @name.reference.type)
(import_using (import_path (string_fragment) @name.reference.module))
