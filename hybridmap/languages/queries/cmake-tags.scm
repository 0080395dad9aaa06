; CMake tags for hybridmap: functions, macros and top-level variables; command calls and ${var} uses.
(function_def
  (function_command (argument_list . (argument (unquoted_argument) @name.definition.function)))) @definition.function
(macro_def
  (macro_command (argument_list . (argument (unquoted_argument) @name.definition.macro)))) @definition.macro
(source_file
  (normal_command (identifier) @_command
    (argument_list . (argument (unquoted_argument) @name.definition.variable))) @definition.variable
  (#match? @_command "^([sS][eE][tT]|[oO][pP][tT][iI][oO][nN])$"))

(normal_command (identifier) @name.reference.call)
(variable_ref (normal_var (variable) @name.reference.call))
; if(VAR) / elseif(VAR) name variables bare.
(if_command (argument_list (argument (unquoted_argument) @name.reference.call)))
(elseif_command (argument_list (argument (unquoted_argument) @name.reference.call)))
