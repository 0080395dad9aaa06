; Rego (OPA) tags for hybridmap: a rule with arguments is a function, any other rule a value;
; the package is the module. References are the names in refs (authz.allow, is_admin(...)).
(rule (rule_head . (var) @name.definition.function (rule_args))) @definition.function
(rule (rule_head . (var) @name.definition.variable)) @definition.variable
(module (package) . (ref) @name.definition.module) @definition.module

(ref . (var) @name.reference.call (#not-match? @name.reference.call "^(input|data|_)$"))
(ref_arg_dot (var) @name.reference.call)
