" Vim indent file for OpenProse (.prose) programs: two spaces per level.
"
"   - after a line ending in `:` (`agent x:`, `parallel:`, `prompt:`...), one level more;
"   - the properties of a session (`let x = session: a` then `prompt: ...`), one level more,
"     also on typing the `:` of a property;
"   - `elif`, `else`, `catch`, `finally` line up with their `if` / `try`;
"   - a statement after a property block goes back to the level of the property's owner
"     (a new line after a property stays with the properties: `==` once the statement is
"     typed);
"   - a line already dedented to an enclosing level keeps it (`=` does not undo a block's end);
"   - text inside a """ string is left alone.
" The language server's formatting (`vim.lsp.buf.format`) gives the canonical form.

if exists('b:did_indent')
  finish
endif
let b:did_indent = 1

setlocal autoindent nolisp nosmartindent
setlocal indentexpr=ProseIndent(v:lnum)
setlocal indentkeys=!^F,o,O,<:>,0),0],0},=elif,=else,=catch,=finally

let b:undo_indent = 'setlocal autoindent< lisp< smartindent< indentexpr< indentkeys<'

if exists('*ProseIndent')
  finish
endif

let s:cpo_save = &cpo
set cpo&vim

let s:statement = '^\s*\%(agent\|block\|let\|const\|input\|output\|session\|resume\|do\|parallel'
      \ . '\|repeat\|for\|loop\|try\|catch\|finally\|throw\|choice\|option\|if\|elif\|else'
      \ . '\|use\|import\)\>'
let s:property = '^\s*\k\+\s*:'
let s:session = '\<\%(session\|resume\)\>'
let s:clauses = {'elif': '^\s*\%(if\|elif\)\>', 'else': '^\s*\%(if\|elif\)\>',
      \ 'catch': '^\s*\%(try\|catch\)\>', 'finally': '^\s*\%(try\|catch\)\>'}

function! s:InString(lnum, col) abort
  for id in synstack(a:lnum, a:col)
    if synIDattr(id, 'name') ==# 'proseTripleString'
      return 1
    endif
  endfor
  return 0
endfunction

" The line without its comment and trailing blanks (a `#` inside a string is not a comment).
function! s:Code(lnum) abort
  let line = getline(a:lnum)
  let start = 0
  while 1
    let hash = stridx(line, '#', start)
    if hash < 0
      break
    endif
    let names = map(synstack(a:lnum, hash + 1), 'synIDattr(v:val, "name")')
    if index(names, 'proseComment') >= 0
      let line = strpart(line, 0, hash)
      break
    endif
    let start = hash + 1
  endwhile
  return substitute(line, '\s\+$', '', '')
endfunction

function! s:IsProperty(lnum) abort
  let code = s:Code(a:lnum)
  return code =~# s:property && code !~# s:statement
endfunction

" The line that starts the statement `lnum` belongs to (the opening line of a """ string).
function! s:LogicalStart(lnum) abort
  let lnum = a:lnum
  while lnum > 1 && s:InString(lnum, max([1, indent(lnum) + 1]))
    let lnum -= 1
  endwhile
  return lnum
endfunction

function! ProseIndent(lnum) abort
  let sw = shiftwidth()
  let line = getline(a:lnum)
  if a:lnum > 1 && s:InString(a:lnum, 1) && s:InString(a:lnum - 1, max([1, len(getline(a:lnum - 1))]))
    return -1
  endif
  let prev = prevnonblank(a:lnum - 1)
  if prev == 0
    return 0
  endif
  let prev = s:LogicalStart(prev)
  let pcode = s:Code(prevnonblank(a:lnum - 1))
  let pind = indent(prev)

  let word = matchstr(line, '^\s*\zs\k\+')
  if has_key(s:clauses, word) && line =~# '^\s*\k\+\%(\s\|:\|$\)'
    let lnum = prev
    let limit = pind + sw
    while lnum > 0
      if getline(lnum) =~# '\S' && indent(lnum) < limit
        let limit = indent(lnum) + 1
        if getline(lnum) =~# s:clauses[word]
          return indent(lnum)
        endif
      endif
      let lnum -= 1
    endwhile
    return pind
  endif

  " The properties of a session are one level in (also on typing the `:` of one).
  if line =~# s:property && line !~# s:statement && s:Code(prev) =~# s:session
        \ && !s:IsProperty(prev) && pcode !~# ':$'
    return pind + sw
  endif
  " Typing in a line (`:` anywhere): leave it as it is.
  if mode() =~# '^[iR]' && line =~# '\S'
    return -1
  endif
  " A block after `:` is one level in.
  if pcode =~# ':$'
    return pind + sw
  endif

  let wanted = pind
  if s:IsProperty(prev) && line =~# '\S' && line !~# '^\s*#'
        \ && !(line =~# s:property && line !~# s:statement)
    " A statement after a property block: the level of the properties' owner (a new,
    " blank line stays with the properties).
    let wanted = max([0, pind - sw])
  endif

  " A non-blank line already dedented to an enclosing level keeps it.
  let current = indent(a:lnum)
  if line =~# '\S' && current < wanted
    let lnum = prev
    let level = pind + 1
    while lnum > 0
      if getline(lnum) =~# '\S' && !s:InString(lnum, indent(lnum) + 1) && indent(lnum) < level
        let level = indent(lnum)
        if level == current
          return current
        endif
        if level == 0
          break
        endif
      endif
      let lnum -= 1
    endwhile
  endif
  return wanted
endfunction

let &cpo = s:cpo_save
unlet s:cpo_save
