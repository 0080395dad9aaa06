; fish shell tags for hybridmap: functions, and variables set globally (set -g/-U, or at top level).
(function_definition name: (word) @name.definition.function) @definition.function
(command name: (word) @_s . argument: (word) @_f . argument: (word) @name.definition.variable
  (#eq? @_s "set") (#match? @_f "^-[A-Za-z]*[gU]")) @definition.variable
(program (command name: (word) @_s . argument: (word) @name.definition.variable
  (#eq? @_s "set") (#not-match? @name.definition.variable "^-")) @definition.variable)

(command name: (word) @name.reference.call
  (#not-match? @name.reference.call "^(set|echo|printf|test|math|string|source|return|contains|count|and|or|not|builtin|command)$"))
(variable_expansion (variable_name) @name.reference.call)
(command name: (word) @_src argument: (word) @name.reference.module (#eq? @_src "source"))
