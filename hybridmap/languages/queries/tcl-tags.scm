; Tcl tags for hybridmap
; Tcl has few dedicated syntax nodes: classes and methods are ordinary commands
; (oo::class create / itcl::class / method), recognised by their command word.

; ---- definitions -----------------------------------------------------------

(procedure
  name: (simple_word) @name.definition.function) @definition.function

(namespace
  (word_list
    . (simple_word) @_eval
    . (simple_word) @name.definition.namespace)
  (#eq? @_eval "eval")) @definition.namespace

; package provide shapes 1.0
(command
  name: (simple_word) @_pkg
  arguments: (word_list
    . (simple_word) @_provide
    . (simple_word) @name.definition.module)
  (#eq? @_pkg "package")
  (#eq? @_provide "provide")) @definition.module

; oo::class create Name { ... }
(command
  name: (simple_word) @_cls
  arguments: (word_list
    . (simple_word) @_create
    . (simple_word) @name.definition.class)
  (#any-of? @_cls "oo::class" "::oo::class")
  (#eq? @_create "create")) @definition.class

; itcl::class Name { ... }
(command
  name: (simple_word) @_cls
  arguments: (word_list
    . (simple_word) @name.definition.class
    . (braced_word))
  (#any-of? @_cls "itcl::class" "::itcl::class" "class")) @definition.class

; method name {args} {body}   (inside a class body)
(command
  name: (simple_word) @_m
  arguments: (word_list
    . (simple_word) @name.definition.method)
  (#any-of? @_m "method" "public" "private" "protected")) @definition.method

; oo::define Class method name {args} {body}
(command
  name: (simple_word) @_def
  arguments: (word_list
    . (simple_word)
    . (simple_word) @_m
    . (simple_word) @name.definition.method)
  (#any-of? @_def "oo::define" "::oo::define")
  (#eq? @_m "method")) @definition.method

; top-level set: UPPER_CASE is a constant, anything else a variable
(source_file
  (set
    (id) @name.definition.constant
    (#match? @name.definition.constant "^(::)?[A-Z][A-Z0-9_]*$")) @definition.constant)

(source_file
  (set
    (id) @name.definition.variable
    (#not-match? @name.definition.variable "^(::)?[A-Z][A-Z0-9_]*$")) @definition.variable)

; namespace eval ns { variable Name value }
(namespace
  (word_list
    (braced_word
      (command
        name: (simple_word) @_var
        arguments: (word_list . (simple_word) @name.definition.variable)
        (#eq? @_var "variable")) @definition.variable)))

; ---- references ------------------------------------------------------------

; Commands in script positions (top level, bodies, [substitutions]).
; Built-ins and Capitalised words (class objects: `Foo new`) are skipped.
(source_file
  (command
    name: (simple_word) @name.reference.call
    (#not-match? @name.reference.call "^(::)?([A-Za-z0-9_]+::)*[A-Z]")
    (#not-match? @name.reference.call
  "^(::)?(puts|return|expr|incr|append|lappend|lindex|llength|list|lsort|lsearch|lrange|lreplace|lset|lassign|lmap|string|dict|array|info|file|format|regexp|regsub|split|join|error|uplevel|upvar|variable|global|namespace|package|source|after|exit|open|close|gets|read|eval|switch|break|continue|next|self|my|superclass|method|constructor|destructor|oo::class|oo::define|oo::objdefine|itcl::class|class|clock|subst|concat|unset|binary|chan|fconfigure|flush|exec|vwait|update|scan|rename|trace|interp|apply|tailcall|throw|yield|coroutine|set|proc|if|foreach|for|while|catch|try|public|private|protected|export|filter|mixin|forward|unexport|deletemethod|renamemethod|pwd|cd|glob|load)$")))

(command_substitution
  (command
    name: (simple_word) @name.reference.call
    (#not-match? @name.reference.call "^(::)?([A-Za-z0-9_]+::)*[A-Z]")
    (#not-match? @name.reference.call
  "^(::)?(puts|return|expr|incr|append|lappend|lindex|llength|list|lsort|lsearch|lrange|lreplace|lset|lassign|lmap|string|dict|array|info|file|format|regexp|regsub|split|join|error|uplevel|upvar|variable|global|namespace|package|source|after|exit|open|close|gets|read|eval|switch|break|continue|next|self|my|superclass|method|constructor|destructor|oo::class|oo::define|oo::objdefine|itcl::class|class|clock|subst|concat|unset|binary|chan|fconfigure|flush|exec|vwait|update|scan|rename|trace|interp|apply|tailcall|throw|yield|coroutine|set|proc|if|foreach|for|while|catch|try|public|private|protected|export|filter|mixin|forward|unexport|deletemethod|renamemethod|pwd|cd|glob|load)$")))

; bodies: proc body, control-flow blocks, and the trailing {script} of a command
; (method/constructor bodies, namespace eval). Non-trailing braced words such as
; argument lists `{a b}` are deliberately not read as scripts.
([
   (procedure body: (braced_word (command name: (simple_word) @name.reference.call)))
   (if consequence: (braced_word (command name: (simple_word) @name.reference.call)))
   (elseif consequence: (braced_word (command name: (simple_word) @name.reference.call)))
   (else consequence: (braced_word (command name: (simple_word) @name.reference.call)))
   (foreach (braced_word (command name: (simple_word) @name.reference.call)))
   (while (braced_word (command name: (simple_word) @name.reference.call)))
   (try (braced_word (command name: (simple_word) @name.reference.call)))
   (catch (braced_word (command name: (simple_word) @name.reference.call)))
   (word_list (braced_word (command name: (simple_word) @name.reference.call)) .)
 ]
 (#not-match? @name.reference.call "^(::)?([A-Za-z0-9_]+::)*[A-Z]")
 (#not-match? @name.reference.call
   "^(::)?(puts|return|expr|incr|append|lappend|lindex|llength|list|lsort|lsearch|lrange|lreplace|lset|lassign|lmap|string|dict|array|info|file|format|regexp|regsub|split|join|error|uplevel|upvar|variable|global|namespace|package|source|after|exit|open|close|gets|read|eval|switch|break|continue|next|self|my|superclass|method|constructor|destructor|oo::class|oo::define|oo::objdefine|itcl::class|class|clock|subst|concat|unset|binary|chan|fconfigure|flush|exec|vwait|update|scan|rename|trace|interp|apply|tailcall|throw|yield|coroutine|set|proc|if|foreach|for|while|catch|try|public|private|protected|export|filter|mixin|forward|unexport|deletemethod|renamemethod|pwd|cd|glob|load)$"))

; method calls: $obj name ...  /  my name ...
(command
  name: (variable_substitution)
  arguments: (word_list . (simple_word) @name.reference.call)) @reference.call

(command
  name: (simple_word) @_my
  arguments: (word_list . (simple_word) @name.reference.call)
  (#any-of? @_my "my" "self")) @reference.call

; instantiation: Foo new ... / Foo create name ...
(command
  name: (simple_word) @name.reference.class
  arguments: (word_list . (simple_word) @_new)
  (#any-of? @_new "new" "create")
  (#not-match? @name.reference.class "^(::)?oo::class$")) @reference.class

; inheritance: superclass Base / inherit Base
(command
  name: (simple_word) @_sup
  arguments: (word_list (simple_word) @name.reference.class)
  (#any-of? @_sup "superclass" "inherit" "mixin")) @reference.class

; package require name
(command
  name: (simple_word) @_pkg
  arguments: (word_list
    . (simple_word) @_require
    . (simple_word) @name.reference.module)
  (#eq? @_pkg "package")
  (#eq? @_require "require")) @reference.module
