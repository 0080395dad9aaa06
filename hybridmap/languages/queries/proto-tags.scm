; Protocol Buffers tags for hybridmap

(package (full_ident) @name.definition.namespace) @definition.namespace
(message (message_name (identifier) @name.definition.struct)) @definition.struct
(enum (enum_name (identifier) @name.definition.enum)) @definition.enum
(service (service_name (identifier) @name.definition.interface)) @definition.interface
(rpc (rpc_name (identifier) @name.definition.method)) @definition.method

; references: message/enum types used by fields, map values, rpcs and extends.
; Qualified names (pkg.sub.Type): keep the type segments, skip lower-case package segments.
(message_or_enum_type
  (identifier) @name.reference.type
  (#match? @name.reference.type "^[A-Z]")) @reference.type
