; Pascal / Delphi tags for hybridmap

(unit (moduleName) @name.definition.module) @definition.module
(program (moduleName) @name.definition.module) @definition.module
(library (moduleName) @name.definition.module) @definition.module

; type declarations: one tag per declType, kind by its body
(declType name: (identifier) @name.definition.class (declClass) @_body
  (#not-match? @_body "(?i)^(packed\\s+)?record")) @definition.class
(declType name: (identifier) @name.definition.struct (declClass) @_body
  (#match? @_body "(?i)^(packed\\s+)?record")) @definition.struct
(declType name: (identifier) @name.definition.interface (declIntf)) @definition.interface
(declType name: (identifier) @name.definition.enum type: (type (declEnum))) @definition.enum
(declType name: (identifier) @name.definition.type
  type: (type [(typeref) (declArray) (declSet) (declProcRef) (declString)])) @definition.type

; members declared inside a class/record/interface
(declSection
  (declProc (kConstructor) name: (identifier) @name.definition.constructor) @definition.constructor)
(declSection
  (declProc name: (identifier) @name.definition.method) @definition.method
  (#not-match? @definition.method "(?i)^constructor"))
(declClass
  (declProc name: (identifier) @name.definition.method) @definition.method
  (#not-match? @definition.method "(?i)^constructor"))
(declIntf
  (declProc name: (identifier) @name.definition.method) @definition.method)

; implementations: TFoo.Bar is a method body, plain names are routines
(defProc
  header: (declProc (kConstructor) name: (genericDot rhs: (identifier) @name.definition.constructor))) @definition.constructor
(defProc
  header: (declProc name: (genericDot rhs: (identifier) @name.definition.method)) @_h
  (#not-match? @_h "(?i)^constructor")) @definition.method
(defProc
  header: (declProc name: (identifier) @name.definition.function)) @definition.function

; unit/program-level constants and variables (not locals of routines)
(interface (declConsts (declConst name: (identifier) @name.definition.constant) @definition.constant))
(implementation (declConsts (declConst name: (identifier) @name.definition.constant) @definition.constant))
(program (declConsts (declConst name: (identifier) @name.definition.constant) @definition.constant))
(interface (declVars (declVar name: (identifier) @name.definition.variable) @definition.variable))
(implementation (declVars (declVar name: (identifier) @name.definition.variable) @definition.variable))
(program (declVars (declVar name: (identifier) @name.definition.variable) @definition.variable))

; references
(declUses (moduleName) @name.reference.module) @reference.module

(exprCall
  entity: (identifier) @name.reference.call
  (#not-match? @name.reference.call "(?i)^(writeln|write|readln|read|inc|dec|length|setlength|high|low|ord|chr|assigned|freeandnil|exit|inttostr|strtoint|format)$")) @reference.call
(exprCall entity: (exprDot rhs: (identifier) @name.reference.call)) @reference.call

(declClass parent: (typeref (identifier) @name.reference.class)) @reference.class
(declIntf parent: (typeref (identifier) @name.reference.implementation)) @reference.implementation
(type (typeref (identifier) @name.reference.type)) @reference.type
(declProc type: (typeref (identifier) @name.reference.type)) @reference.type

; TFoo.Create(...) instantiates TFoo
(exprCall
  entity: (exprDot
    lhs: (identifier) @name.reference.class
    rhs: (identifier) @_ctor)
  (#match? @_ctor "(?i)^create")) @reference.class
