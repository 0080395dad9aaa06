; R tags for hybridmap: top-level functions, classes and constants; calls.
(program (binary_operator lhs: (identifier) @name.definition.function rhs: (function_definition)) @definition.function)
(program (binary_operator lhs: (identifier) @name.definition.class
  rhs: (call function: (identifier) @_maker)) @definition.class
  (#any-of? @_maker "setRefClass" "setClass" "R6Class"))
(program (binary_operator lhs: (identifier) @name.definition.constant rhs: [(float) (integer) (string) (true) (false)]) @definition.constant)

(call function: (identifier) @name.reference.call)
(call function: (namespace_operator rhs: (identifier) @name.reference.call))
