" Vim syntax file for OpenProse (.prose) programs.
" Highlighting without treesitter; the language server adds semantic tokens on top of it
" where the editor supports them (Neovim 0.9+).

if exists('b:current_syntax')
  finish
endif

let s:cpo_save = &cpo
set cpo&vim

" Names may contain hyphens between their parts: `follow-up`, `open-questions`.
syntax iskeyword @,48-57,_,192-255,-
syntax case match

" Statements and the words that read as keywords where the grammar expects them.
syntax keyword proseKeyword do parallel repeat for in loop until while try catch finally throw
syntax keyword proseKeyword choice option if elif else as from use import map filter reduce pmap
syntax keyword proseOperatorWord not and or is
" Outside the grammar: the checker explains what to write instead (E041).
syntax keyword proseUnsupported return break continue assert pass

" `agent name:` and `block name(params):`
syntax keyword proseDefine agent nextgroup=proseAgentName skipwhite
syntax keyword proseDefine block nextgroup=proseBlockName skipwhite
syntax match proseAgentName '\k\+' contained
syntax match proseBlockName '\k\+' contained

" `let name`, `const name`, `input name`, `output name`
syntax keyword proseBinding let const input output nextgroup=proseVariable skipwhite
syntax match proseVariable '\k\+' contained

" `session: agent`, `resume: agent`, `session name: agent`, `session "prompt"`
syntax keyword proseSession session resume nextgroup=proseSessionColon,proseSessionName skipwhite
syntax match proseSessionName '\k\+\ze\s*:' contained nextgroup=proseSessionColon skipwhite
syntax match proseSessionColon ':' contained nextgroup=proseAgentRef skipwhite
syntax match proseAgentRef '\k\+' contained

" `do name(args)`
syntax match proseBlockRef '\%(\<do\s\+\)\@<=\k\+\ze\s*('

" Properties: `model: opus`, `prompt: "..."`, `(max: 4)`.
syntax match proseProperty '^\s*\zs\k\+\ze\s*:'
syntax match proseProperty '\%((\|,\)\s*\zs\k\+\ze\s*:'

syntax keyword proseConstant true false null none True False None
syntax keyword proseModel haiku sonnet opus
syntax match proseNumber '\<-\?\d\+\%(\.\d\+\)\?\%([A-Za-z_]\k*\)\?'
syntax match proseOperator '->\|==\|!=\|<=\|>=\||'

" Comments.
syntax keyword proseTodo TODO FIXME XXX NOTE contained
syntax match proseComment '#.*$' contains=proseTodo,@Spell

" Strings: "..." on one line, """...""" across lines (a run of three or more quotes closes
" it), with escapes and {name} / {name.property} interpolations.
syntax match proseEscape '\\.' contained
syntax match proseInterpolation '{\s*\k\+\%(\.\k\+\)*\s*}' contained
syntax region proseString start=+"+ skip=+\\.+ end=+"+ end=+$+ keepend
      \ contains=proseEscape,proseInterpolation,@Spell
syntax region proseTripleString start=+"""+ skip=+\\.+ end=+"\{3,}+
      \ contains=proseEscape,proseInterpolation,@Spell

" Discretion: **condition** on one line, ***condition*** across lines.
syntax match proseDiscretion '\*\*\%([^*]\|\*\%(\*\)\@!\)\+\*\*'
syntax region proseDiscretion start='\*\*\*' end='\*\*\*' contains=@Spell

" A """ string may span many lines and its text may sit in column 0: parse from the top.
syntax sync fromstart

highlight default link proseKeyword Keyword
highlight default link proseOperatorWord Operator
highlight default link proseUnsupported Error
highlight default link proseDefine Keyword
highlight default link proseBinding Keyword
highlight default link proseSession Keyword
highlight default link proseAgentName Type
highlight default link proseAgentRef Type
highlight default link proseBlockName Function
highlight default link proseBlockRef Function
highlight default link proseVariable Identifier
highlight default link proseSessionName Identifier
highlight default link proseProperty Identifier
highlight default link proseConstant Constant
highlight default link proseModel Constant
highlight default link proseNumber Number
highlight default link proseOperator Operator
highlight default link proseComment Comment
highlight default link proseTodo Todo
highlight default link proseString String
highlight default link proseTripleString String
highlight default link proseEscape SpecialChar
highlight default link proseInterpolation Special
highlight default link proseDiscretion Special

let b:current_syntax = 'prose'

let &cpo = s:cpo_save
unlet s:cpo_save
