; udev rules tags for hybridmap: a LABEL is a jump target (what GOTO names), an ENV{X}= assignment
; sets a variable that later rules match or substitute.
(assignment key: "LABEL" (value (content) @name.definition.function)) @definition.function
(assignment key: "ENV" (env_var) @name.definition.variable (assignment_op) @_op (#match? @_op "^:?=$")) @definition.variable

(assignment key: "GOTO" (value (content) @name.reference.call))
(match key: "ENV" (env_var) @name.reference.call)
(var_sub (env_var) @name.reference.call)
