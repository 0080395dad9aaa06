; Prisma schema tags for hybridmap: models are classes, their fields fields, enums enums;
; datasource/generator blocks are modules. Field types naming a model or enum are references.
(model_block . (identifier) @name.definition.class) @definition.class
(enum_block . (identifier) @name.definition.enum) @definition.enum
(key_value_block . (identifier) @name.definition.module) @definition.module
(model_field field_name: (identifier) @name.definition.field) @definition.field

(field_type (_ (identifier) @name.reference.type))
(field_type (_ (_ (identifier) @name.reference.type)))
(field_type (_ (_ (_ (identifier) @name.reference.type))))
(apply_function name: (identifier) @name.reference.call)
