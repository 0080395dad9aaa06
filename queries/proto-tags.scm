; Protocol Buffers tags for hybridmap: messages, enums, services and rpcs; type uses.
(message (message_name (identifier) @name.definition.struct)) @definition.struct
(enum (enum_name (identifier) @name.definition.enum)) @definition.enum
(service (service_name (identifier) @name.definition.interface)) @definition.interface
(rpc (rpc_name (identifier) @name.definition.method)) @definition.method
(package (full_ident) @name.definition.module) @definition.module

(message_or_enum_type (identifier) @name.reference.type)
