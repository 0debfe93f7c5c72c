;;; prose-mode.el --- Major mode for OpenProse programs  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1"))
;; Keywords: languages
;; URL: https://github.com/openprose

;;; Commentary:

;; A major mode for OpenProse (.prose) programs:
;;
;; - highlighting of keywords, strings ("..." and """..."""), comments, discretion
;;   conditions (**...** and ***...***), agent, block and variable names, properties;
;; - indentation by two spaces (`prose-indent-line'): one level more after a line ending
;;   in `:' and for the properties of a session; `elif', `else', `catch' and `finally' line
;;   up with their `if' or `try'; text inside a """ string is left alone;
;; - `#' comments (`comment-dwim', `comment-region');
;; - the language server prose-ls through eglot (registered in `eglot-server-programs'),
;;   and `prose-format-on-save' to format with the server before each save.
;;
;; Set-up:
;;
;;   (add-to-list 'load-path "/path/to/openprose/editors/emacs")
;;   (require 'prose-mode)
;;   (add-hook 'prose-mode-hook #'eglot-ensure)

;;; Code:

(require 'cl-lib)
(require 'rx)
(require 'subr-x)

(declare-function eglot-format-buffer "eglot" ())
(declare-function eglot-managed-p "eglot" ())
(defvar eglot-server-programs)

(defgroup prose nil
  "Editing OpenProse programs."
  :group 'languages
  :prefix "prose-")

(defcustom prose-indent-offset 2
  "Indentation of one block level (the canonical form uses 2)."
  :type 'integer
  :safe #'integerp)

(defcustom prose-ls-command '("prose-ls")
  "How eglot starts the language server: a program and its arguments.
For example (\"python3\" \"-m\" \"openprose.lsp\") for a server installed in a
given Python."
  :type '(repeat string))

(defcustom prose-ls-initialization-options nil
  "Settings sent to prose-ls as `initializationOptions' (a plist), or nil.
Keys: :select, :extend-select, :ignore, :severity, :format (:enable t or
:json-false), :debounce (milliseconds), :trace.  A project's prose.toml takes
precedence over the rule settings."
  :type '(plist))

(defcustom prose-format-on-save t
  "When non-nil, format `prose-mode' buffers managed by eglot before saving.
Formatting goes through the language server (`eglot-format-buffer'); a
program with syntax errors is left as it is.  Toggle it per buffer with
`prose-format-on-save-mode'."
  :type 'boolean
  :safe #'booleanp)

(defcustom prose-project-markers '("prose.toml")
  "Files marking the root of an OpenProse project, besides version control.
The nearest directory holding one becomes the project root (for `project.el',
and so the workspace eglot gives the server)."
  :type '(repeat string))

(defcustom prose-run-command '("prose" "run")
  "How `prose-run' runs a program: a program and its arguments, before the file.
For example (\"python3\" \"-m\" \"openprose\" \"run\")."
  :type '(repeat string))

(defgroup prose-faces nil
  "Faces of `prose-mode'."
  :group 'prose)

(defface prose-discretion-face
  '((t :inherit font-lock-preprocessor-face :slant italic))
  "Discretion conditions: **...** and ***...***, judged by the model."
  :group 'prose-faces)

(defface prose-property-face
  '((t :inherit font-lock-builtin-face))
  "Property names: model:, prompt:, context:..."
  :group 'prose-faces)

(defface prose-interpolation-face
  '((t :inherit font-lock-variable-name-face :weight bold))
  "Interpolations inside strings: {name}, {name.property}."
  :group 'prose-faces)

;;;; Syntax

(defconst prose--keywords
  '("agent" "block" "let" "const" "input" "output" "session" "resume" "do" "parallel"
    "repeat" "for" "in" "loop" "until" "while" "try" "catch" "finally" "throw" "choice"
    "option" "if" "elif" "else" "as" "use" "import" "from" "map" "filter" "reduce" "pmap"
    "not" "and" "or" "is")
  "Words highlighted as keywords.")

(defconst prose--unsupported '("return" "break" "continue" "assert" "pass")
  "Statements outside the grammar (the checker says what to write instead).")

(defconst prose--statement-re
  (rx bol (* blank)
      (or "agent" "block" "let" "const" "input" "output" "session" "resume" "do" "parallel"
          "repeat" "for" "loop" "try" "catch" "finally" "throw" "choice" "option" "if" "elif"
          "else" "use" "import")
      symbol-end)
  "A line starting with a statement keyword.")

(defconst prose--name-re "[[:alpha:]_][[:alnum:]_]*\\(?:-[[:alnum:]_]+\\)*"
  "A name: letters, digits and underscores, parts joined by hyphens.")

(defvar prose-mode-syntax-table
  (let ((table (make-syntax-table)))
    (modify-syntax-entry ?# "<" table)
    (modify-syntax-entry ?\n ">" table)
    (modify-syntax-entry ?\" "\"" table)
    (modify-syntax-entry ?\\ "\\" table)
    (modify-syntax-entry ?' "." table)
    (modify-syntax-entry ?_ "_" table)
    (modify-syntax-entry ?- "_" table)
    (modify-syntax-entry ?* "." table)
    (modify-syntax-entry ?: "." table)
    (modify-syntax-entry ?= "." table)
    (modify-syntax-entry ?| "." table)
    (modify-syntax-entry ?< "." table)
    (modify-syntax-entry ?> "." table)
    (modify-syntax-entry ?{ "(}" table)
    (modify-syntax-entry ?} "){" table)
    table)
  "Syntax table of `prose-mode'.")

(defun prose--stringify-triple-quotes ()
  "Mark the quotes just matched as the fences of a \"\"\" string.
A run of three or more quotes opens a string with its first quote, or closes
one with its last (the others are text, as prose-ls reads them)."
  (let* ((start (match-beginning 0))
         (end (match-end 0))
         (ppss (save-excursion (syntax-ppss start))))
    (when (save-excursion                         ; an escaped first quote is text
            (goto-char start)
            (cl-oddp (skip-chars-backward "\\\\")))
      (setq start (1+ start)))
    (cond
     ((< (- end start) 3) nil)
     ((nth 4 ppss) nil)                           ; in a comment
     ((eq (nth 3 ppss) t)                         ; inside a """ string: close it
      (put-text-property (1- end) end 'syntax-table (string-to-syntax "|")))
     ((nth 3 ppss)                                ; a "..." string ends on its first quote
      (goto-char (1+ start)))
     (t                                           ; open one
      (put-text-property start (1+ start) 'syntax-table (string-to-syntax "|"))
      (if (>= (- end start) 6)                    ; """""" is an empty string
          (put-text-property (1- end) end 'syntax-table (string-to-syntax "|"))
        (goto-char (+ start 3)))))))

(defconst prose--syntax-propertize
  (syntax-propertize-rules
   ("\"\\{3,\\}" (0 (ignore (prose--stringify-triple-quotes)))))
  "Marks \"\"\" strings for the syntax machinery.")

;;;; Highlighting

(defun prose--match-discretion (limit)
  "Find the next discretion condition before LIMIT, outside strings and comments."
  (let (found)
    (while (and (not found)
                (re-search-forward "\\*\\*\\*\\(?:[^*]\\|\\*[^*]\\|\\*\\*[^*]\\)*?\\*\\*\\*\\|\\*\\*[^*\n]+\\*\\*"
                                   limit t))
      (let ((ppss (save-excursion (syntax-ppss (match-beginning 0)))))
        (unless (or (nth 3 ppss) (nth 4 ppss))
          (setq found t))))
    found))

(defun prose--match-interpolation (limit)
  "Find the next {name} interpolation inside a string before LIMIT."
  (let (found)
    (while (and (not found)
                (re-search-forward
                 (concat "{[ \t]*" prose--name-re "\\(?:\\." prose--name-re "\\)*[ \t]*}")
                 limit t))
      (when (nth 3 (save-excursion (syntax-ppss (match-beginning 0))))
        (setq found t)))
    found))

(defconst prose-font-lock-keywords
  `((prose--match-discretion (0 'prose-discretion-face t))
    (prose--match-interpolation (0 'prose-interpolation-face t))
    (,(concat "\\_<\\(agent\\)[ \t]+\\(" prose--name-re "\\)")
     (1 font-lock-keyword-face) (2 font-lock-type-face))
    (,(concat "\\_<\\(block\\)[ \t]+\\(" prose--name-re "\\)")
     (1 font-lock-keyword-face) (2 font-lock-function-name-face))
    (,(concat "\\_<\\(?:let\\|const\\|input\\|output\\)[ \t]+\\(" prose--name-re "\\)")
     (1 font-lock-variable-name-face))
    (,(concat "\\_<\\(?:session\\|resume\\)\\(?:[ \t]+" prose--name-re "\\)?[ \t]*:[ \t]*\\("
              prose--name-re "\\)")
     (1 font-lock-type-face))
    (,(concat "\\_<do[ \t]+\\(" prose--name-re "\\)[ \t]*(")
     (1 font-lock-function-name-face))
    (,(regexp-opt prose--keywords 'symbols) . font-lock-keyword-face)
    (,(regexp-opt prose--unsupported 'symbols) . font-lock-warning-face)
    (,(concat "^[ \t]*\\(" prose--name-re "\\)[ \t]*:") (1 'prose-property-face))
    (,(concat "[(,][ \t]*\\(" prose--name-re "\\)[ \t]*:") (1 'prose-property-face))
    (,(regexp-opt '("true" "false" "null" "none" "True" "False" "None" "haiku" "sonnet" "opus")
                  'symbols)
     . font-lock-constant-face)
    ("\\_<-?[0-9]+\\(?:\\.[0-9]+\\)?" . font-lock-constant-face))
  "Highlighting of `prose-mode' (strings and comments come from the syntax table).")

;;;; Indentation

(defun prose--line-code ()
  "The current line without its comment and trailing blanks."
  (save-excursion
    (let* ((start (line-beginning-position))
           (end (line-end-position))
           (ppss (syntax-ppss end)))              ; (moves point)
      (when (and (nth 4 ppss) (>= (nth 8 ppss) start))
        (setq end (nth 8 ppss)))
      (string-trim-right (buffer-substring-no-properties start end)))))

(defun prose--in-triple-string-p (&optional pos)
  "Non-nil when POS (default: point) is inside a \"\"\" string."
  (eq t (nth 3 (syntax-ppss (or pos (point))))))

(defun prose--property-line-p ()
  "Non-nil when the current line is a property (`name: ...'), not a statement."
  (let ((code (prose--line-code)))
    (and (string-match-p (concat "\\`[ \t]*" prose--name-re "[ \t]*:") code)
         (not (string-match-p prose--statement-re code)))))

(defun prose--previous-line ()
  "Move to the start of the statement before the current line; nil at the top.
Blank lines are skipped, and a line inside a \"\"\" string counts as the line that
opened the string."
  (let ((found nil))
    (while (and (not found) (zerop (forward-line -1)))
      (unless (looking-at-p "[ \t]*$")
        (setq found t)))
    (when found
      (back-to-indentation)
      (while (prose--in-triple-string-p)
        (goto-char (nth 8 (syntax-ppss)))
        (back-to-indentation))
      (beginning-of-line)
      t)))

(defun prose--clause-indentation (word from limit)
  "The indentation of the `if' or `try' that WORD belongs to.
WORD is elif, else, catch or finally; search upwards from FROM among lines
indented less than LIMIT."
  (let ((opener (if (member word '("elif" "else"))
                    "[ \t]*\\(?:if\\|elif\\)\\_>"
                  "[ \t]*\\(?:try\\|catch\\)\\_>"))
        (result nil))
    (save-excursion
      (goto-char from)
      (while (and (not result) (not (bobp)))
        (unless (or (looking-at-p "[ \t]*$") (prose--in-triple-string-p))
          (when (< (current-indentation) limit)
            (setq limit (1+ (current-indentation)))
            (when (looking-at-p opener)
              (setq result (current-indentation)))))
        (forward-line -1))
      (when (and (not result) (bobp) (looking-at-p opener))
        (setq result (current-indentation))))
    result))

(defun prose--enclosing-level-p (column from)
  "Non-nil when COLUMN is the indentation of a block enclosing the line at FROM."
  (save-excursion
    (goto-char from)
    (let ((level (1+ (current-indentation))) (found nil) (done nil))
      (while (and (not found) (not done))
        (unless (or (looking-at-p "[ \t]*$") (prose--in-triple-string-p))
          (when (< (current-indentation) level)
            (setq level (current-indentation))
            (cond ((= level column) (setq found t))
                  ((zerop level) (setq done t)))))
        (unless (zerop (forward-line -1)) (setq done t)))
      found)))

(defun prose-calculate-indentation ()
  "The indentation the current line should have, or nil to leave it as it is."
  (save-excursion
    (beginning-of-line)
    (if (prose--in-triple-string-p)
        nil
      (let* ((current (current-indentation))
             (blank (looking-at-p "[ \t]*$"))
             (word (and (looking-at (concat "[ \t]*\\(" prose--name-re "\\)"))
                        (match-string-no-properties 1)))
             (line (prose--line-code))
             (is-property (prose--property-line-p))
             (is-comment (looking-at-p "[ \t]*#"))
             (last-code (save-excursion
                          (and (zerop (forward-line -1))
                               (progn
                                 (while (and (looking-at-p "[ \t]*$") (zerop (forward-line -1))))
                                 (prose--line-code)))))
             (prev (save-excursion (and (prose--previous-line) (point)))))
        (cond
         ((null prev) 0)
         (t
          (let* ((pind (save-excursion (goto-char prev) (current-indentation)))
                 (pcode (save-excursion (goto-char prev) (prose--line-code)))
                 (pprop (save-excursion (goto-char prev) (prose--property-line-p))))
            (cond
             ((and (member word '("elif" "else" "catch" "finally"))
                   (string-match-p (concat "\\`[ \t]*" word "\\(?:[ \t:]\\|\\'\\)") line))
              (or (prose--clause-indentation word prev (+ pind prose-indent-offset)) pind))
             ((string-suffix-p ":" last-code) (+ pind prose-indent-offset))
             ((and is-property (not pprop)
                   (string-match-p "\\_<\\(?:session\\|resume\\)\\_>" pcode))
              (+ pind prose-indent-offset))
             (t
              ;; A statement after a property block goes back to the level of the
              ;; properties' owner; a new (blank) line stays with the properties.
              (let ((wanted (if (and pprop (not blank) (not is-property) (not is-comment))
                                (max 0 (- pind prose-indent-offset))
                              pind)))
                (if (and (not blank) (< current wanted)
                         (prose--enclosing-level-p current prev))
                    current
                  wanted)))))))))))

(defun prose-indent-line ()
  "Indent the current line as OpenProse (`indent-line-function')."
  (interactive)
  (let ((indent (prose-calculate-indentation))
        (offset (- (current-column) (current-indentation))))
    (if (null indent)
        'noindent
      (indent-line-to indent)
      (if (> offset 0)
          (move-to-column (+ indent offset))
        (back-to-indentation)))))

(defun prose--electric-colon ()
  "Reindent the line when a `:' typed makes it a clause or a session's property.
`else:', `catch:'... line up with their `if' or `try'; `prompt:' after a
session goes one level in.  Other lines are left as they are."
  (when (and (eq last-command-event ?:)
             (not (nth 8 (syntax-ppss))))
    (let ((line (buffer-substring-no-properties (line-beginning-position) (point))))
      (when (or (string-match-p
                 "\\`[ \t]*\\(?:else\\|elif\\|catch\\|finally\\)\\_>" line)
                (and (string-match-p (concat "\\`[ \t]*" prose--name-re "[ \t]*:\\'") line)
                     (not (string-match-p prose--statement-re line))))
        (let ((indent (prose-calculate-indentation)))
          (when (and indent (/= indent (current-indentation)))
            (save-excursion (indent-line-to indent))))))))

;;;; Project root

(defun prose--project-find (dir)
  "A project at the nearest directory above DIR with `prose-project-markers'."
  (when-let ((root (cl-some (lambda (marker) (locate-dominating-file dir marker))
                            prose-project-markers)))
    (cons 'transient (expand-file-name root))))

;;;; Language server

(defun prose-eglot-contact (&optional _interactive)
  "The server eglot starts for `prose-mode': `prose-ls-command' and its options."
  (append prose-ls-command
          (when prose-ls-initialization-options
            (list :initializationOptions prose-ls-initialization-options))))

(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs '(prose-mode . prose-eglot-contact)))

(defvar prose-format-on-save-mode)

(defun prose--format-before-save ()
  "Format the buffer with the language server, when eglot manages it."
  (when (and prose-format-on-save-mode
             (fboundp 'eglot-managed-p) (eglot-managed-p))
    (eglot-format-buffer)))

(define-minor-mode prose-format-on-save-mode
  "Format the buffer with prose-ls (`eglot-format-buffer') before each save."
  :lighter nil
  (if prose-format-on-save-mode
      (add-hook 'before-save-hook #'prose--format-before-save nil t)
    (remove-hook 'before-save-hook #'prose--format-before-save t)))

;;;; Running programs

(defun prose-run (&optional arguments)
  "Run the current program with `prose run' in a compilation buffer.
The buffer is saved first (`prose run' reads the file); the run starts in the
program's directory, so its run directory goes to .prose/runs there.  With a
prefix argument, read extra ARGUMENTS first (for example --input topic=tides).
The buffer is interactive (comint): inputs are asked there, and \\[comint-interrupt-subjob]
interrupts the run."
  (interactive
   (list (when current-prefix-arg
           (split-string-and-unquote (read-string "prose run arguments: ")))))
  (unless buffer-file-name
    (user-error "Save the program to a file first"))
  (when (buffer-modified-p)
    (save-buffer))
  (let* ((file (expand-file-name buffer-file-name))
         (default-directory (file-name-directory file))
         (command (mapconcat #'shell-quote-argument
                             (append prose-run-command (list file) arguments)
                             " ")))
    (compilation-start command t (lambda (_mode) "*prose run*"))))

;;;; The mode

(defvar prose-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'prose-run)
    map)
  "Keymap of `prose-mode'.")

;;;###autoload
(define-derived-mode prose-mode prog-mode "Prose"
  "Major mode for OpenProse programs.

\\{prose-mode-map}"
  :syntax-table prose-mode-syntax-table
  (setq-local comment-start "# ")
  (setq-local comment-start-skip "#+[ \t]*")
  (setq-local comment-end "")
  (setq-local indent-tabs-mode nil)
  (setq-local tab-width 8)
  (setq-local indent-line-function #'prose-indent-line)
  (setq-local electric-indent-inhibit t)
  (setq-local syntax-propertize-function prose--syntax-propertize)
  (setq-local parse-sexp-lookup-properties t)
  (setq-local font-lock-defaults '(prose-font-lock-keywords nil nil nil nil))
  (setq-local font-lock-multiline t)
  (add-hook 'post-self-insert-hook #'prose--electric-colon nil t)
  (add-hook 'project-find-functions #'prose--project-find nil t)
  (when prose-format-on-save
    (prose-format-on-save-mode 1)))

;;;###autoload
(add-to-list 'auto-mode-alist '("\\.prose\\'" . prose-mode))

(provide 'prose-mode)

;;; prose-mode.el ends here
