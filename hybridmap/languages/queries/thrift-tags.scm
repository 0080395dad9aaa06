; Apache Thrift IDL tags for hybridmap

; ---- definitions -----------------------------------------------------------

(struct_definition
  type: (identifier) @name.definition.struct) @definition.struct

(union_definition
  type: (identifier) @name.definition.struct) @definition.struct

(exception_definition
  . (identifier) @name.definition.class) @definition.class

(enum_definition
  type: (identifier) @name.definition.enum) @definition.enum

(service_definition
  "service" . (identifier) @name.definition.interface) @definition.interface

(service_definition
  (function_definition
    (identifier) @name.definition.method) @definition.method)

(typedef_definition
  (typedef_identifier) @name.definition.type) @definition.type

(const_definition
  (identifier) @name.definition.constant) @definition.constant

; fields of structs / unions / exceptions (the field's own name, not its type)
(field
  (identifier) @name.definition.field) @definition.field

; ---- references ------------------------------------------------------------

; user types in fields, parameters, return types, containers: `Item` or `shared.Item`
; (the last identifier is the type; a leading one is the include prefix)
(type
  (identifier) @name.reference.type .) @reference.type

; service Inventory extends BaseService / extends shared.BaseService
(service_definition
  "extends" . (identifier) @name.reference.implementation . "{")

(service_definition
  "extends" . (identifier) . "." . (identifier) @name.reference.implementation)

; include "shared.thrift"
(include_statement
  (string (string_fragment) @name.reference.module)) @reference.module
