;;; claude-bridge-commands.el --- The commands and the menu of claude-bridge  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The claude-duplex-bridge authors

;; Author: The claude-duplex-bridge authors
;; URL: https://github.com/claude-duplex-bridge/claude-duplex-bridge
;; Keywords: tools, processes

;; This file is not part of GNU Emacs.

;; SPDX-License-Identifier: MIT

;;; Commentary:

;; The commands of claude-bridge.el, and `claude-bridge-menu', a
;; transient menu of all of them.  Each works in a chat buffer on its
;; chat, and elsewhere on the chat of the current project (the
;; `project.el' root, else `default-directory'), which is what
;; `project-switch-project' gives it.  They are autoloaded from
;; claude-bridge.el, which loads this file.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'tabulated-list)
(require 'transient)
(require 'claude-bridge-protocol)
(require 'claude-bridge-client)
(require 'claude-bridge-model)
(require 'claude-bridge-permission)
(require 'claude-bridge-view)

;; What claude-bridge.el, which loads this file, defines.
(declare-function claude-bridge--current-chat "claude-bridge" (&optional noerror))
(declare-function claude-bridge--project-root "claude-bridge" (&optional directory))
(declare-function claude-bridge--project-buffers "claude-bridge" (root))
(declare-function claude-bridge--new-chat "claude-bridge" (root))
(declare-function claude-bridge--live-p "claude-bridge" (chat))
(declare-function claude-bridge--chat-name "claude-bridge" (chat))
(declare-function claude-bridge--close-chat "claude-bridge" (chat &optional notice))
(declare-function claude-bridge--busy-p "claude-bridge" (chat))
(declare-function claude-bridge--resume "claude-bridge" (root claude-session-id))
(declare-function claude-bridge-submit "claude-bridge" (chat text &optional attachments))
(declare-function claude-bridge-chats "claude-bridge" ())
(declare-function claude-bridge-restart "claude-bridge" (&optional chat))
(defvar claude-bridge-command)

(defcustom claude-bridge-clipboard-image-command nil
  "Command that prints the clipboard's image as PNG.
For `claude-bridge-paste-image'.
A list: program and arguments.  nil tries wl-paste, xclip and pngpaste.
In a graphical frame the clipboard is read directly first."
  :type '(choice (const :tag "Find one" nil) (repeat string))
  :group 'claude-bridge)

;;;; Chats

(defun claude-bridge--chat-or-new ()
  "Return the chat of this buffer or project, opening one when there is none."
  (or (claude-bridge--current-chat t)
      (buffer-local-value 'claude-bridge--buffer-chat (claude-bridge-chat))))

(defun claude-bridge--show (chat)
  "Show CHAT's buffer in a window, without selecting it."
  (when-let ((buf (claude-bridge-view-chat-buffer chat)))
    (display-buffer buf)))

;;;###autoload (autoload 'claude-bridge-chat "claude-bridge" nil t)
(defun claude-bridge-chat (&optional directory new)
  "Open or show the Claude chat of the current project and return its buffer.
The project is the `project.el' root of DIRECTORY (default:
`default-directory'), else DIRECTORY itself.  With a prefix argument
\(NEW non-nil), open another chat of the project beside the others."
  (interactive (list nil current-prefix-arg))
  (let* ((root (claude-bridge--project-root directory))
         (buf (or (and (not new) (car (claude-bridge--project-buffers root)))
                  (claude-bridge--new-chat root))))
    (if (called-interactively-p 'any)
        (pop-to-buffer buf)
      (display-buffer buf))
    (with-current-buffer buf
      (unless (claude-bridge-view-in-prompt-p) (goto-char (point-max))))
    buf))

;;;###autoload (autoload 'claude-bridge-new-chat "claude-bridge" nil t)
(defun claude-bridge-new-chat ()
  "Open another Claude chat of the current project, beside the others."
  (interactive)
  (pop-to-buffer (claude-bridge-chat nil t)))

;;;###autoload (autoload 'claude-bridge-switch-chat "claude-bridge" nil t)
(defun claude-bridge-switch-chat (buffer)
  "Show the chat BUFFER, picked among this Emacs's chats."
  (interactive
   (let ((names (mapcar (lambda (c) (buffer-name (claude-bridge--chat-buffer c)))
                        (claude-bridge-chats))))
     (unless names (user-error "No Claude chat yet: M-x claude-bridge-chat opens one"))
     (list (completing-read "Chat: " names nil t nil nil (car names)))))
  (pop-to-buffer buffer))

;;;; Sending

;;;###autoload (autoload 'claude-bridge-send "claude-bridge" nil t)
(defun claude-bridge-send (prompt &optional chat)
  "Send PROMPT to Claude in CHAT (default: this chat or the project's).
Interactively, in a chat buffer, PROMPT is the text typed after the
line at the bottom; elsewhere it is read from the minibuffer.  The
chat's context chips go with it.  While a turn runs, PROMPT goes into
that turn as a live message.  A chat whose process is gone starts
again, continuing its conversation."
  (interactive
   (list (or (claude-bridge-view-take-input)
             (cond ((null claude-bridge--buffer-chat) (read-string "Ask Claude: "))
                   ((claude-bridge--chat-attachments claude-bridge--buffer-chat) "")
                   (t (user-error "Type the prompt below the line at the bottom first"))))))
  (let ((chat (or chat (claude-bridge--chat-or-new))))
    (when (and (string-empty-p (string-trim prompt))
               (null (claude-bridge--chat-attachments chat)))
      (user-error "Nothing to send"))
    (let ((attachments (claude-bridge--chat-attachments chat)))
      (setf (claude-bridge--chat-attachments chat) nil)
      (claude-bridge-submit chat (string-trim prompt) attachments))
    (unless (eq (current-buffer) (claude-bridge--chat-buffer chat))
      (claude-bridge--show chat))
    chat))

(defun claude-bridge--language (mode)
  "The name of the language of major MODE, for a fenced code block."
  (string-remove-suffix "-ts" (string-remove-suffix "-mode" (symbol-name mode))))

(defun claude-bridge--region-attachment (start end)
  "Return the region from START to END as an attachment, with its file and lines."
  (let* ((file (if buffer-file-name
                   (file-relative-name buffer-file-name (claude-bridge--project-root))
                 (buffer-name)))
         (first (line-number-at-pos start))
         (last (line-number-at-pos (if (and (> end start)
                                            (save-excursion (goto-char end) (bolp)))
                                       (1- end)
                                     end))))
    (list :kind 'region :path buffer-file-name
          :label (if (= first last) (format "%s:%d" file first)
                   (format "%s:%d-%d" file first last))
          :language (claude-bridge--language major-mode)
          :text (buffer-substring-no-properties start end))))

(defun claude-bridge--buffer-attachment (buffer)
  "Return BUFFER as an attachment: its file when it visits one, else its text."
  (with-current-buffer buffer
    (if buffer-file-name
        (list :kind 'file :path buffer-file-name
              :label (file-relative-name buffer-file-name (claude-bridge--project-root)))
      (list :kind 'buffer :label (buffer-name)
            :language (claude-bridge--language major-mode)
            :text (buffer-substring-no-properties (point-min) (point-max))))))

;;;###autoload (autoload 'claude-bridge-send-region "claude-bridge" nil t)
(defun claude-bridge-send-region (start end &optional question)
  "Send the region from START to END to Claude now, with its file and lines.
QUESTION, if not empty, goes with it.  The chat is shown."
  (interactive "r\nsAbout the region (optional): ")
  (let* ((attachment (claude-bridge--region-attachment start end))
         (chat (claude-bridge--chat-or-new)))
    (claude-bridge-submit chat (string-trim (or question ""))
                          (append (claude-bridge--chat-attachments chat) (list attachment)))
    (setf (claude-bridge--chat-attachments chat) nil)
    (claude-bridge--show chat)
    (message "Sent %s to Claude (%s)" (plist-get attachment :label)
             (claude-bridge--chat-name chat))
    chat))

(defun claude-bridge--attach (chat attachment)
  "Add ATTACHMENT to CHAT's next prompt and say so."
  (claude-bridge-model-attach chat attachment)
  (claude-bridge-view-flush chat)
  (message "%s goes with the next prompt to Claude (%s)"
           (plist-get attachment :label) (claude-bridge--chat-name chat)))

;;;###autoload (autoload 'claude-bridge-add "claude-bridge" nil t)
(defun claude-bridge-add (&optional remove)
  "Add the region, or else this buffer, to the next prompt of the project's chat.
In Dired, add the marked files.  The chat shows what its next prompt
takes as chips; with a prefix argument (REMOVE), take this buffer or
the region away again."
  (interactive "P")
  (let* ((chat (claude-bridge--chat-or-new))
         (attachments
          (cond
           ((derived-mode-p 'dired-mode)
            (mapcar #'claude-bridge--file-attachment
                    (with-no-warnings (dired-get-marked-files))))
           ((use-region-p)
            (prog1 (list (claude-bridge--region-attachment (region-beginning) (region-end)))
              (deactivate-mark)))
           ((eq (current-buffer) (claude-bridge--chat-buffer chat))
            (user-error "In the chat, C-c C-a adds a file"))
           (t (list (claude-bridge--buffer-attachment (current-buffer)))))))
    (dolist (a attachments)
      (if remove
          (progn (claude-bridge-model-detach chat (plist-get a :label))
                 (claude-bridge-view-flush chat)
                 (message "%s no longer goes with the next prompt" (plist-get a :label)))
        (claude-bridge--attach chat a)))
    (claude-bridge--show chat)))

(defun claude-bridge--image-attachment (label media-type bytes)
  "Return an image attachment called LABEL of MEDIA-TYPE with the unibyte BYTES."
  (when (> (length bytes) (* 5 1024 1024))
    (user-error "%s is larger than 5 MB, the most an image may be" label))
  (list :kind 'image :label label :media-type media-type
        :data (base64-encode-string bytes t)))

(defun claude-bridge--file-attachment (file)
  "Return FILE as an attachment: an image, a folder's listing or a file's text."
  (let* ((file (expand-file-name file))
         (root (claude-bridge--project-root))
         (label (if (file-in-directory-p file root) (file-relative-name file root)
                  (abbreviate-file-name file)))
         (type (cdr (assoc (downcase (or (file-name-extension file) ""))
                           claude-bridge-model-image-types))))
    (cond
     ((file-directory-p file) (list :kind 'directory :path file :label label))
     (type (claude-bridge--image-attachment
            label type (with-temp-buffer
                         (set-buffer-multibyte nil)
                         (insert-file-contents-literally file)
                         (buffer-string))))
     (t (list :kind 'file :path file :label label)))))

;;;###autoload (autoload 'claude-bridge-add-file "claude-bridge" nil t)
(defun claude-bridge-add-file (file)
  "Add FILE to the next prompt.
An image is sent as an image, a folder as its listing."
  (interactive
   (list (read-file-name "Add to the next prompt: "
                         (and claude-bridge--buffer-chat
                              (claude-bridge--chat-cwd claude-bridge--buffer-chat))
                         nil t)))
  (let ((chat (claude-bridge--chat-or-new)))
    (let ((default-directory (claude-bridge--chat-cwd chat)))
      (claude-bridge--attach chat (claude-bridge--file-attachment file)))))

(defun claude-bridge--clipboard-commands ()
  "The commands that may print the clipboard's image, first the chosen one."
  (or (and claude-bridge-clipboard-image-command (list claude-bridge-clipboard-image-command))
      (cl-remove-if-not (lambda (c) (executable-find (car c)))
                        '(("wl-paste" "--no-newline" "--type" "image/png")
                          ("xclip" "-selection" "clipboard" "-target" "image/png" "-out")
                          ("pngpaste" "-")))))

(defun claude-bridge--clipboard-png ()
  "Return the clipboard's image as unibyte PNG bytes, or nil."
  (let ((png-p (lambda (s) (and (stringp s) (string-prefix-p "\x89PNG" s)))))
    (or (and (display-graphic-p)
             (let ((data (ignore-errors (gui-get-selection 'CLIPBOARD 'image/png))))
               (and (funcall png-p data) (encode-coding-string data 'binary))))
        (cl-some (lambda (command)
                   (with-temp-buffer
                     (set-buffer-multibyte nil)
                     (let ((coding-system-for-read 'binary))
                       (when (eql 0 (ignore-errors
                                      (apply #'call-process (car command) nil
                                             (list t nil) nil (cdr command))))
                         (let ((data (buffer-string)))
                           (and (funcall png-p data) data))))))
                 (claude-bridge--clipboard-commands)))))

(defvar claude-bridge--pasted 0
  "How many images were pasted, to name the next one.")

;;;###autoload (autoload 'claude-bridge-paste-image "claude-bridge" nil t)
(defun claude-bridge-paste-image ()
  "Add the clipboard's image to the next prompt."
  (interactive)
  (let ((png (or (claude-bridge--clipboard-png)
                 (user-error "No image in the clipboard%s"
                             (if (or (display-graphic-p) (claude-bridge--clipboard-commands))
                                 ""
                               " (in a terminal, install wl-paste or xclip)"))))
        (chat (claude-bridge--chat-or-new)))
    (claude-bridge--attach
     chat (claude-bridge--image-attachment
           (format "pasted-%d.png" (cl-incf claude-bridge--pasted)) "image/png" png))))

(defun claude-bridge-remove-context (label)
  "Take the context chip LABEL away from the next prompt; \"all\" takes every one.
On a chip, take that one."
  (interactive
   (let* ((chat (claude-bridge--current-chat))
          (labels (mapcar (lambda (a) (plist-get a :label))
                          (claude-bridge--chat-attachments chat))))
     (unless labels (user-error "The next prompt has no context"))
     (list (or (get-text-property (point) 'claude-bridge-chip)
               (completing-read "Remove from the next prompt: " (cons "all" labels) nil t
                                nil nil (car (last labels)))))))
  (let ((chat (claude-bridge--current-chat)))
    (claude-bridge-model-detach chat (unless (equal label "all") label))
    (claude-bridge-view-flush chat)))

;;;; The session

;;;###autoload (autoload 'claude-bridge-interrupt "claude-bridge" nil t)
(defun claude-bridge-interrupt (&optional chat)
  "Interrupt the running turn of CHAT; the Claude process stays."
  (interactive)
  (let ((chat (or chat (claude-bridge--current-chat))))
    (if (not (eq (claude-bridge--chat-state chat) 'running))
        (message "Claude is not working in this chat")
      (claude-bridge-client-call
       "session/interrupt" (list :sessionId (claude-bridge--chat-id chat))
       :start nil))))

(defun claude-bridge--annotated (candidates annotations &optional keep-order)
  "A completion table of CANDIDATES annotated from the alist ANNOTATIONS.
KEEP-ORDER non-nil shows them in their order instead of sorted."
  (lambda (string pred action)
    (if (eq action 'metadata)
        `(metadata
          ,@(when keep-order '((display-sort-function . identity)
                               (cycle-sort-function . identity)))
          (annotation-function
           . ,(lambda (c)
                (let ((a (cdr (assoc c annotations))))
                  (if a (concat "  " a) "")))))
      (complete-with-action action candidates string pred))))

(defun claude-bridge--live-chat ()
  "Return the chat of this buffer or project; it must be running."
  (let ((chat (claude-bridge--current-chat)))
    (unless (claude-bridge--live-p chat)
      (user-error "Claude does not run in this chat now: send a prompt to start it"))
    chat))

(defun claude-bridge-set-model (model &optional chat)
  "Switch CHAT to MODEL (an alias or id; empty: the default) from the next turn."
  (interactive
   (let* ((chat (claude-bridge--live-chat))
          (models (claude-bridge--chat-models chat)))
     (list (completing-read
            (format "Model (now %s): " (or (claude-bridge--chat-model chat) "default"))
            (claude-bridge--annotated
             (mapcar (lambda (m) (plist-get m :value)) models)
             (mapcar (lambda (m) (cons (plist-get m :value)
                                       (or (plist-get m :description)
                                           (plist-get m :displayName))))
                     models)
             t))
           chat)))
  (let ((chat (or chat (claude-bridge--live-chat)))
        (model (if (member model '("" "default")) nil model)))
    (claude-bridge-client-call
     "session/setModel" (list :sessionId (claude-bridge--chat-id chat) :model model)
     :start nil
     :on-result (lambda (r)
                  (setf (claude-bridge--chat-model chat) (or (plist-get r :model) "default"))
                  (claude-bridge-model-notice chat (format "Model: %s" (or model "default")))))))

(defun claude-bridge-set-permission-mode (mode &optional chat)
  "Switch CHAT to permission MODE."
  (interactive
   (let ((chat (claude-bridge--live-chat)))
     (list (completing-read
            (format "Permission mode (now %s): "
                    (or (claude-bridge--chat-permission-mode chat) "default"))
            (claude-bridge--annotated (mapcar #'car claude-bridge-protocol-permission-modes)
                                      claude-bridge-protocol-permission-modes t)
            nil t)
           chat)))
  (let ((chat (or chat (claude-bridge--live-chat))))
    (claude-bridge-client-call
     "session/setPermissionMode" (list :sessionId (claude-bridge--chat-id chat) :mode mode)
     :start nil
     :on-result (lambda (r)
                  (setf (claude-bridge--chat-permission-mode chat) (plist-get r :mode))
                  (claude-bridge-model-notice
                   chat (format "Permission mode: %s (%s)" (plist-get r :mode)
                                (or (cdr (assoc (plist-get r :mode)
                                                claude-bridge-protocol-permission-modes))
                                    "")))))))

(defun claude-bridge-close (&optional chat)
  "Close CHAT's session; its buffer stays, and the next prompt opens a new one."
  (interactive)
  (let ((chat (or chat (claude-bridge--current-chat))))
    (unless (claude-bridge--live-p chat) (user-error "The session is not open"))
    (claude-bridge--close-chat chat "Session closed.")))

;;;###autoload (autoload 'claude-bridge-answer-permission "claude-bridge" nil t)
(defun claude-bridge-answer-permission ()
  "Go to the oldest permission prompt that waits: this chat's, else any chat's.
Point lands on its card, whose keys answer it."
  (interactive)
  (let* ((here claude-bridge--buffer-chat)
         (chat (or (and here (claude-bridge--chat-permissions here) here)
                   (cl-find-if #'claude-bridge--chat-permissions (claude-bridge-chats))
                   (user-error "No permission prompt waits")))
         (item (car (claude-bridge--chat-permissions chat))))
    (claude-bridge-view-flush chat)
    (pop-to-buffer (claude-bridge--chat-buffer chat))
    (goto-char (claude-bridge-item-start item))
    ;; The whole card in view, its choices too.
    (unless (pos-visible-in-window-p (claude-bridge-item-end item))
      (recenter (max 0 (- (window-body-height)
                          (count-lines (claude-bridge-item-start item)
                                       (claude-bridge-item-end item))
                          2))))
    (let* ((choices (claude-bridge-permission-choices (claude-bridge-model-get item :request)
                                                      item))
           (rules (cl-count-if (lambda (c) (consp (plist-get c :do))) choices)))
      (message "%s%s · RET all choices"
               (mapconcat (lambda (c) (format "%c %s" (plist-get c :key) (plist-get c :label)))
                          (cl-remove-if (lambda (c) (consp (plist-get c :do))) choices)
                          " · ")
               (pcase rules (0 "") (1 " · 1 the rule") (n (format " · 1-%d the rules" n)))))))

;;;; Resume

(defun claude-bridge--plain-title (title)
  "TITLE on one line, without Markdown syntax."
  (let ((s (car (split-string (or title "") "\n"))))
    (setq s (replace-regexp-in-string "\\`[#>[:space:]]+" "" s))
    (setq s (replace-regexp-in-string "\\*\\*\\|__\\|`\\|\\[\\|\\]([^)]*)\\|\\]" "" s))
    (string-trim s)))

(defun claude-bridge--open-conversation-p (claude-session-id)
  "Return the live chat of this Emacs with the conversation CLAUDE-SESSION-ID."
  (cl-find-if (lambda (c) (and (claude-bridge--live-p c)
                               (equal (claude-bridge--chat-claude-session-id c)
                                      claude-session-id)))
              (claude-bridge-chats)))

(defun claude-bridge--history-choices (entries)
  "Return alist (LABEL . ENTRY) for history ENTRIES, newest first, labels unique.
The conversation a chat of this Emacs holds is marked (open)."
  (let ((seen (make-hash-table :test #'equal)))
    (mapcar
     (lambda (e)
       (let* ((title (truncate-string-to-width
                      (claude-bridge--plain-title
                       (or (plist-get e :title) (plist-get e :firstPrompt) "(untitled)"))
                      60 nil nil "…"))
              (label (format "%s  %s%s"
                             (format-time-string "%Y-%m-%d %H:%M"
                                                 (/ (plist-get e :lastModified) 1000.0))
                             title
                             (if (claude-bridge--open-conversation-p
                                  (plist-get e :claudeSessionId))
                                 "  (open)" ""))))
         (when (gethash label seen)
           (setq label (format "%s  [%s]" label
                               (substring (plist-get e :claudeSessionId) 0 8))))
         (puthash label t seen)
         (cons label e)))
     entries)))

;;;###autoload (autoload 'claude-bridge-resume "claude-bridge" nil t)
(defun claude-bridge-resume (&optional claude-session-id directory)
  "Continue an earlier conversation of the project of DIRECTORY.
Interactively pick it among the project's conversations, newest
first; the one open now is marked, and picking it shows its chat.
From Lisp, pass its CLAUDE-SESSION-ID.  Its messages are shown again,
then the chat goes on.  The resumed chat replaces the project's chat,
whose conversation stays in the history.  Return the chat buffer."
  (interactive)
  (let* ((root (claude-bridge--project-root directory))
         (entry
          (if claude-session-id
              (list :claudeSessionId claude-session-id)
            (let* ((result (claude-bridge-client-call-sync
                            "session/history"
                            (list :cwd (directory-file-name root) :limit 100)))
                   (choices (claude-bridge--history-choices
                             (append (plist-get result :conversations) nil)))
                   (default (car (or (cl-find-if-not
                                      (lambda (c) (claude-bridge--open-conversation-p
                                                   (plist-get (cdr c) :claudeSessionId)))
                                      choices)
                                     (car choices)))))
              (unless choices (user-error "No earlier conversation in %s" root))
              (cdr (assoc (completing-read
                           (format "Resume conversation (default %s): " default)
                           (claude-bridge--annotated (mapcar #'car choices) nil t)
                           nil t nil nil default)
                          choices)))))
         (id (plist-get entry :claudeSessionId))
         (open (claude-bridge--open-conversation-p id))
         (old (car (claude-bridge--project-buffers root))))
    (if open
        (let ((buf (claude-bridge--chat-buffer open)))
          (when (called-interactively-p 'any) (pop-to-buffer buf))
          buf)
      (when old
        (let ((chat (buffer-local-value 'claude-bridge--buffer-chat old)))
          (when (and (called-interactively-p 'any) (claude-bridge--busy-p chat)
                     (not (yes-or-no-p "Claude is working in this project's chat: stop it? ")))
            (user-error "Not resumed"))
          ;; Closed first: the bridge refuses to resume a conversation a
          ;; live session still holds.
          (when (and (claude-bridge--live-p chat) (claude-bridge--chat-id chat))
            (claude-bridge-client-call-sync
             "session/close" (list :sessionId (claude-bridge--chat-id chat))))
          (claude-bridge--close-chat chat)
          (let ((kill-buffer-query-functions nil)) (kill-buffer old))))
      ;; A session of a chat killed a moment ago may still hold it while it closes.
      (when-let ((holder (plist-get entry :liveSessionId)))
        (claude-bridge-client-call-sync "session/close" (list :sessionId holder)))
      (let ((buf (claude-bridge--resume root id)))
        (when (called-interactively-p 'any) (pop-to-buffer buf))
        buf))))

;;;; The session list

(defun claude-bridge--session-entries ()
  "Return the tabulated list entries of the chats whose session is open."
  (let ((status (make-hash-table :test #'equal)))
    (when (claude-bridge-client-live-p)
      (dolist (s (append (plist-get (claude-bridge-client-call-sync "session/list" nil)
                                    :sessions)
                         nil))
        (puthash (plist-get s :sessionId) s status)))
    (delq nil
          (mapcar
           (lambda (chat)
             (let ((s (gethash (claude-bridge--chat-id chat) status)))
               (when (and s (claude-bridge--live-p chat)
                          (not (equal (plist-get s :state) "exited")))
                 (list (claude-bridge--chat-buffer chat)
                       (vector (buffer-name (claude-bridge--chat-buffer chat))
                               (symbol-name (claude-bridge--chat-state chat))
                               (or (claude-bridge--chat-model chat) "default")
                               (or (claude-bridge--chat-permission-mode chat) "default")
                               (claude-bridge-view--format-cost
                                (claude-bridge-model-total-cost chat))
                               (abbreviate-file-name (claude-bridge--chat-cwd chat)))))))
           (claude-bridge-chats)))))

;;;###autoload (autoload 'claude-bridge-sessions "claude-bridge" nil t)
(defun claude-bridge-sessions ()
  "List the open Claude sessions of this Emacs.
\\<claude-bridge-sessions-mode-map>\\[claude-bridge-sessions-visit] shows one, \\[revert-buffer] refreshes the list.
Return the list's buffer."
  (interactive)
  (let ((buf (get-buffer-create "*claude-bridge sessions*")))
    (with-current-buffer buf
      (claude-bridge-sessions-mode)
      (revert-buffer))
    (when (called-interactively-p 'any) (pop-to-buffer buf))
    buf))

(defun claude-bridge-sessions-visit ()
  "Show the chat of the session at point."
  (interactive)
  (let ((buf (tabulated-list-get-id)))
    (unless (buffer-live-p buf) (user-error "That chat is gone: g refreshes the list"))
    (pop-to-buffer buf)))

(defun claude-bridge-sessions-close ()
  "Close the session at point."
  (interactive)
  (let ((buf (tabulated-list-get-id)))
    (when (buffer-live-p buf)
      (claude-bridge--close-chat (buffer-local-value 'claude-bridge--buffer-chat buf)
                                 "Session closed."))
    (revert-buffer)))

(defvar claude-bridge-sessions-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'claude-bridge-sessions-visit)
    (define-key map (kbd "k") #'claude-bridge-sessions-close)
    map)
  "Keymap of `claude-bridge-sessions-mode'.")

(define-derived-mode claude-bridge-sessions-mode tabulated-list-mode "Claude Sessions"
  "Major mode listing the open Claude sessions.
\\{claude-bridge-sessions-mode-map}"
  (setq tabulated-list-format [("Chat" 24 t) ("State" 8 t) ("Model" 16 t)
                               ("Mode" 12 t) ("Cost" 9 t) ("Directory" 0 t)])
  (add-hook 'tabulated-list-revert-hook
            (lambda () (setq tabulated-list-entries (claude-bridge--session-entries)))
            nil t)
  (tabulated-list-init-header))

;;;; The bridge

;;;###autoload (autoload 'claude-bridge-doctor "claude-bridge" nil t)
(defun claude-bridge-doctor ()
  "Check the bridge and the CLI: run `claude-bridge doctor' and show its report.
It runs the command of `claude-bridge-command', in Emacs's
environment, as sessions do.  The report says which CLI was found,
its version, and whether a session starts."
  (interactive)
  (let* ((serve (cl-position "serve" claude-bridge-command :test #'equal))
         (command (append (cl-subseq claude-bridge-command 0 serve)
                          '("doctor")
                          (let ((path (member "--claude-path" claude-bridge-command)))
                            (and path (cadr path) (list "--claude-path" (cadr path))))))
         (buf (get-buffer-create "*claude-bridge doctor*")))
    (with-current-buffer buf
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (format "$ %s\n\n" (mapconcat #'shell-quote-argument command " "))))
      (special-mode))
    (make-process :name "claude-bridge-doctor" :buffer buf :command command
                  :connection-type 'pipe :noquery t
                  :sentinel (lambda (proc _event)
                              (unless (process-live-p proc)
                                (message "claude-bridge doctor: %s"
                                         (if (zerop (process-exit-status proc))
                                             "all good" "problems found, see its buffer")))))
    (display-buffer buf)
    buf))

;;;###autoload (autoload 'claude-bridge-shutdown "claude-bridge" nil t)
(defun claude-bridge-shutdown ()
  "Stop the bridge and every Claude process of it."
  (interactive)
  (claude-bridge-client-shutdown))

;;;; The menu

(defun claude-bridge--menu-chat-description ()
  "The heading of the menu: which chat it acts on."
  (let ((chat (claude-bridge--current-chat t)))
    (if chat
        (format "Claude (%s): %s, %s, %s" (claude-bridge--chat-name chat)
                (or (claude-bridge--chat-model chat) "default model")
                (or (claude-bridge--chat-permission-mode chat) "default mode")
                (claude-bridge--chat-state chat))
      "Claude: no chat in this project yet")))

;;;###autoload (autoload 'claude-bridge-menu "claude-bridge" nil t)
(transient-define-prefix claude-bridge-menu ()
  "Everything a Claude chat can do."
  [:description claude-bridge--menu-chat-description
   ["Chat"
    ("c" "Open the project's chat" claude-bridge-chat)
    ("s" "Send the prompt" claude-bridge-send)
    ("k" "Interrupt the turn" claude-bridge-interrupt)
    ("p" "Go to a waiting permission prompt" claude-bridge-answer-permission)
    ("n" "New chat of the project" claude-bridge-new-chat)
    ("b" "Switch chat" claude-bridge-switch-chat)]
   ["Context of the next prompt"
    ("a" "Add the region or buffer" claude-bridge-add)
    ("f" "Add a file, folder or image" claude-bridge-add-file)
    ("i" "Paste an image" claude-bridge-paste-image)
    ("d" "Remove context" claude-bridge-remove-context)
    ("R" "Send the region now" claude-bridge-send-region)]]
  [["Session"
    ("m" "Switch model" claude-bridge-set-model)
    ("o" "Switch permission mode" claude-bridge-set-permission-mode)
    ("r" "Resume a conversation" claude-bridge-resume)
    ("l" "Open sessions" claude-bridge-sessions)
    ("q" "Close the session" claude-bridge-close)
    ("S" "Restart Claude" claude-bridge-restart)]
   ["Bridge"
    ("D" "Check the setup" claude-bridge-doctor)
    ("X" "Stop the bridge" claude-bridge-shutdown)]])

(provide 'claude-bridge-commands)
;;; claude-bridge-commands.el ends here
