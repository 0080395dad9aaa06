; Makefile tags for hybridmap: rule targets and variables; prerequisites and $(VAR) uses.
(rule (targets (word) @name.definition.function) (#not-match? @name.definition.function "^\\.")) @definition.function
(makefile (variable_assignment name: (word) @name.definition.variable) @definition.variable)

(prerequisites (word) @name.reference.call)
(variable_reference (word) @name.reference.call)
