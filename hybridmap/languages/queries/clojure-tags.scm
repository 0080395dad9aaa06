; Clojure tags for hybridmap: the def forms by their head symbol.
(list_lit . (sym_lit name: (sym_name) @_d) . (sym_lit name: (sym_name) @name.definition.function)
  (#any-of? @_d "defn" "defn-" "defmulti")) @definition.function
(list_lit . (sym_lit name: (sym_name) @_d) . (sym_lit name: (sym_name) @name.definition.method)
  (#eq? @_d "defmethod")) @definition.method
(list_lit . (sym_lit name: (sym_name) @_d) . (sym_lit name: (sym_name) @name.definition.macro)
  (#eq? @_d "defmacro")) @definition.macro
(list_lit . (sym_lit name: (sym_name) @_d) . (sym_lit name: (sym_name) @name.definition.variable)
  (#any-of? @_d "def" "defonce")) @definition.variable
(list_lit . (sym_lit name: (sym_name) @_d) . (sym_lit name: (sym_name) @name.definition.class)
  (#any-of? @_d "defrecord" "deftype")) @definition.class
(list_lit . (sym_lit name: (sym_name) @_d) . (sym_lit name: (sym_name) @name.definition.interface)
  (#any-of? @_d "defprotocol" "definterface")) @definition.interface
(list_lit . (sym_lit name: (sym_name) @_d) . (sym_lit name: (sym_name) @name.definition.module)
  (#eq? @_d "ns")) @definition.module

; calls: the head of any other list; qualified symbols (cart/total); required namespaces
(list_lit . (sym_lit name: (sym_name) @name.reference.call)
  (#not-match? @name.reference.call "^(def.*|ns|fn|let|if|do|when|cond|loop|recur|quote)$"))
(sym_lit namespace: (sym_ns) name: (sym_name) @name.reference.call)
(list_lit . (kwd_lit name: (kwd_name) @_r) (vec_lit . (sym_lit name: (sym_name) @name.reference.module))
  (#any-of? @_r "require" "use"))
