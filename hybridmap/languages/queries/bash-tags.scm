; Bash tags for hybridmap: functions and top-level variables; commands and $VAR uses.
(function_definition name: (word) @name.definition.function) @definition.function
(program (variable_assignment name: (variable_name) @name.definition.variable) @definition.variable)
(program (declaration_command (variable_assignment name: (variable_name) @name.definition.variable)) @definition.variable)

(command name: (command_name (word) @name.reference.call))
(simple_expansion (variable_name) @name.reference.call)
(expansion (variable_name) @name.reference.call)
