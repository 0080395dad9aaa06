; Erlang tags for hybridmap. A function is its fun_decl (all clauses), named by the first clause.
(fun_decl . clause: (function_clause name: (atom) @name.definition.function)) @definition.function
(module_attribute name: (atom) @name.definition.module) @definition.module
(record_decl name: (atom) @name.definition.struct) @definition.struct
(type_alias name: (type_name name: (atom) @name.definition.type)) @definition.type
(opaque name: (type_name name: (atom) @name.definition.type)) @definition.type
(pp_define lhs: (macro_lhs name: (_) @name.definition.macro)) @definition.macro
(callback fun: (atom) @name.definition.interface) @definition.interface

(call expr: (atom) @name.reference.call)
(call expr: (remote fun: (atom) @name.reference.call))
(remote module: (remote_module module: (atom) @name.reference.module))
(fa fun: (atom) @name.reference.call)
(record_name name: (atom) @name.reference.type)
(macro_call_expr name: (_) @name.reference.call)
(behaviour_attribute name: (atom) @name.reference.implementation)
