; Elixir tags for hybridmap: modules, functions, macros, module attributes; calls and aliases.
(call target: (identifier) @_kw (arguments (alias) @name.definition.module) (#eq? @_kw "defmodule")) @definition.module
(call target: (identifier) @_kw (arguments [(call target: (identifier) @name.definition.function)
                                            (binary_operator left: (call target: (identifier) @name.definition.function))])
  (#any-of? @_kw "def" "defp" "defdelegate")) @definition.function
(call target: (identifier) @_kw (arguments [(call target: (identifier) @name.definition.macro)
                                            (binary_operator left: (call target: (identifier) @name.definition.macro))])
  (#any-of? @_kw "defmacro" "defmacrop" "defguard")) @definition.macro
(call target: (identifier) @_kw (arguments (alias) @name.definition.interface) (#eq? @_kw "defprotocol")) @definition.interface

(call target: (dot right: (identifier) @name.reference.call))
(call target: (identifier) @name.reference.call
  (#not-match? @name.reference.call "^(def|defp|defmodule|defmacro|defmacrop|defguard|defprotocol|defimpl|defstruct|defdelegate|alias|import|require|use|if|unless|case|cond|with|for|fn)$"))
(call target: (dot left: (alias) @name.reference.module))
