/*! sitebot widget: one tag, `<script src="https://HOST/v1/widget.js" data-site-id="GUID" async></script>`.
 * Plain JavaScript, no framework, no build step. Adds one <sitebot-widget> element with an open shadow root;
 * styles live in constructable stylesheets (works under a strict CSP: no inline styles, no eval, no innerHTML).
 * Answer text, source titles and what the visitor and the staff write are untrusted: they only ever become text
 * nodes and attribute values.
 * Suggested questions (the site's, in the visitor's language) are buttons before the first question; one pressed is asked.
 * `data-preview="TOKEN"` (the console's preview page only) asks for the site's unpublished draft and opens the panel.
 * Live hand-off: "Talk to a person" asks for one when the site has it on (the contact form when none can come);
 * while a person is awaited or present, messages go to `/conversations/{id}/messages` and the conversation's event
 * stream (resumed with Last-Event-ID after a reload or a drop) shows theirs.
 * Theming: `sitebot-widget::part(launcher|panel|input|send|message|staff-message|note|citation|source|feedback-up|
 * feedback-down|lead-open|lead-name|lead-email|lead-message|lead-submit|handoff|handoff-cancel|status|suggestion)` and the custom properties --sitebot-primary,
 * --sitebot-on-primary, --sitebot-link, --sitebot-bg, --sitebot-text, --sitebot-font, --sitebot-radius. */
(() => {
  'use strict';
  const script = document.currentScript || document.querySelector('script[data-site-id]');
  if (!script || !window.customElements || customElements.get('sitebot-widget')) return;
  const siteId = (script.dataset.siteId || '').trim();
  const previewToken = (script.dataset.preview || '').trim();
  let API;
  try { API = new URL(script.src, location.href).origin + '/v1'; } catch { return; }

  // ---- texts -------------------------------------------------------------------------------------------
  const T = {
    en: { open: 'Open chat', close: 'Close chat', title: 'Assistant', hello: 'Hello! How can I help you?', ph: 'Ask a question…', q: 'Your question', send: 'Send', log: 'Conversation', src: 'Sources', src1: 'Source', up: 'Helpful', down: 'Not helpful', thx: 'Thank you for your feedback.', talk: 'Talk to a person', intro: 'Leave your details and we will get back to you.', name: 'Name', email: 'E-mail', msg: 'Message', opt: 'optional', submit: 'Send', back: 'Back', bad: 'Please enter a valid e-mail address.', sent: 'Thank you! We will get back to you soon.', rate: 'Too many requests. Please try again in {n}.', rate0: 'Too many requests. Please try again in a moment.', net: 'No connection. Please check your connection and try again.', cut: 'The connection was interrupted. The answer may be incomplete.', err: 'Sorry, something went wrong. Please try again.', inv: 'Please check your entries.', retry: 'Try again', wait: 'Thinking…' },
    de: { open: 'Chat öffnen', close: 'Chat schließen', title: 'Assistent', hello: 'Hallo! Wie kann ich Ihnen helfen?', ph: 'Stellen Sie eine Frage…', q: 'Ihre Frage', send: 'Senden', log: 'Unterhaltung', src: 'Quellen', src1: 'Quelle', up: 'Hilfreich', down: 'Nicht hilfreich', thx: 'Vielen Dank für Ihr Feedback.', talk: 'Mit einer Person sprechen', intro: 'Hinterlassen Sie Ihre Kontaktdaten, wir melden uns bei Ihnen.', name: 'Name', email: 'E-Mail', msg: 'Nachricht', opt: 'optional', submit: 'Absenden', back: 'Zurück', bad: 'Bitte geben Sie eine gültige E-Mail-Adresse ein.', sent: 'Vielen Dank! Wir melden uns bald bei Ihnen.', rate: 'Zu viele Anfragen. Bitte versuchen Sie es in {n} erneut.', rate0: 'Zu viele Anfragen. Bitte versuchen Sie es gleich noch einmal.', net: 'Keine Verbindung. Bitte prüfen Sie Ihre Internetverbindung und versuchen Sie es erneut.', cut: 'Die Verbindung wurde unterbrochen. Die Antwort ist möglicherweise unvollständig.', err: 'Leider ist ein Fehler aufgetreten. Bitte versuchen Sie es erneut.', inv: 'Bitte überprüfen Sie Ihre Eingaben.', retry: 'Erneut versuchen', wait: 'Einen Moment…' },
    fr: { open: 'Ouvrir le chat', close: 'Fermer le chat', title: 'Assistant', hello: 'Bonjour\u00a0! Comment puis-je vous aider\u00a0?', ph: 'Posez une question…', q: 'Votre question', send: 'Envoyer', log: 'Conversation', src: 'Sources', src1: 'Source', up: 'Utile', down: 'Pas utile', thx: 'Merci pour votre avis.', talk: 'Parler à une personne', intro: 'Laissez vos coordonnées et nous vous recontacterons.', name: 'Nom', email: 'E-mail', msg: 'Message', opt: 'facultatif', submit: 'Envoyer', back: 'Retour', bad: 'Veuillez saisir une adresse e-mail valide.', sent: 'Merci\u00a0! Nous vous recontacterons bientôt.', rate: 'Trop de demandes. Veuillez réessayer dans {n}.', rate0: 'Trop de demandes. Veuillez réessayer dans un instant.', net: 'Pas de connexion. Vérifiez votre connexion et réessayez.', cut: 'La connexion a été interrompue. La réponse est peut-être incomplète.', err: 'Désolé, une erreur s’est produite. Veuillez réessayer.', inv: 'Veuillez vérifier vos saisies.', retry: 'Réessayer', wait: 'Un instant…' },
    es: { open: 'Abrir chat', close: 'Cerrar chat', title: 'Asistente', hello: '¡Hola! ¿En qué puedo ayudarle?', ph: 'Haga una pregunta…', q: 'Su pregunta', send: 'Enviar', log: 'Conversación', src: 'Fuentes', src1: 'Fuente', up: 'Útil', down: 'No útil', thx: 'Gracias por su opinión.', talk: 'Hablar con una persona', intro: 'Déjenos sus datos y nos pondremos en contacto con usted.', name: 'Nombre', email: 'Correo electrónico', msg: 'Mensaje', opt: 'opcional', submit: 'Enviar', back: 'Volver', bad: 'Introduzca una dirección de correo electrónico válida.', sent: '¡Gracias! Nos pondremos en contacto con usted pronto.', rate: 'Demasiadas solicitudes. Inténtelo de nuevo en {n}.', rate0: 'Demasiadas solicitudes. Inténtelo de nuevo en un momento.', net: 'Sin conexión. Compruebe su conexión e inténtelo de nuevo.', cut: 'Se interrumpió la conexión. Es posible que la respuesta esté incompleta.', err: 'Lo sentimos, se produjo un error. Inténtelo de nuevo.', inv: 'Revise los datos introducidos.', retry: 'Reintentar', wait: 'Un momento…' },
    it: { open: 'Apri la chat', close: 'Chiudi la chat', title: 'Assistente', hello: 'Ciao! Come posso aiutarti?', ph: 'Fai una domanda…', q: 'La tua domanda', send: 'Invia', log: 'Conversazione', src: 'Fonti', src1: 'Fonte', up: 'Utile', down: 'Non utile', thx: 'Grazie per il tuo feedback.', talk: 'Parla con una persona', intro: 'Lascia i tuoi dati e ti ricontatteremo.', name: 'Nome', email: 'E-mail', msg: 'Messaggio', opt: 'facoltativo', submit: 'Invia', back: 'Indietro', bad: 'Inserisci un indirizzo e-mail valido.', sent: 'Grazie! Ti ricontatteremo presto.', rate: 'Troppe richieste. Riprova tra {n}.', rate0: 'Troppe richieste. Riprova tra un momento.', net: 'Nessuna connessione. Controlla la connessione e riprova.', cut: 'La connessione si è interrotta. La risposta potrebbe essere incompleta.', err: 'Si è verificato un errore. Riprova.', inv: 'Controlla i dati inseriti.', retry: 'Riprova', wait: 'Un momento…' },
    pt: { open: 'Abrir chat', close: 'Fechar chat', title: 'Assistente', hello: 'Olá! Como posso ajudar?', ph: 'Faça uma pergunta…', q: 'Sua pergunta', send: 'Enviar', log: 'Conversa', src: 'Fontes', src1: 'Fonte', up: 'Útil', down: 'Não útil', thx: 'Obrigado pelo seu feedback.', talk: 'Falar com uma pessoa', intro: 'Deixe seus dados e entraremos em contato com você.', name: 'Nome', email: 'E-mail', msg: 'Mensagem', opt: 'opcional', submit: 'Enviar', back: 'Voltar', bad: 'Informe um endereço de e-mail válido.', sent: 'Obrigado! Entraremos em contato em breve.', rate: 'Muitas solicitações. Tente novamente em {n}.', rate0: 'Muitas solicitações. Tente novamente em instantes.', net: 'Sem conexão. Verifique sua conexão e tente novamente.', cut: 'A conexão foi interrompida. A resposta pode estar incompleta.', err: 'Desculpe, ocorreu um erro. Tente novamente.', inv: 'Verifique os dados informados.', retry: 'Tentar novamente', wait: 'Um momento…' },
    nl: { open: 'Chat openen', close: 'Chat sluiten', title: 'Assistent', hello: 'Hallo! Waarmee kan ik u helpen?', ph: 'Stel een vraag…', q: 'Uw vraag', send: 'Verzenden', log: 'Gesprek', src: 'Bronnen', src1: 'Bron', up: 'Nuttig', down: 'Niet nuttig', thx: 'Bedankt voor uw feedback.', talk: 'Met een medewerker praten', intro: 'Laat uw gegevens achter, dan nemen wij contact met u op.', name: 'Naam', email: 'E-mailadres', msg: 'Bericht', opt: 'optioneel', submit: 'Versturen', back: 'Terug', bad: 'Voer een geldig e-mailadres in.', sent: 'Bedankt! We nemen binnenkort contact met u op.', rate: 'Te veel verzoeken. Probeer het over {n} opnieuw.', rate0: 'Te veel verzoeken. Probeer het zo opnieuw.', net: 'Geen verbinding. Controleer uw verbinding en probeer het opnieuw.', cut: 'De verbinding is verbroken. Het antwoord is mogelijk onvolledig.', err: 'Er is iets misgegaan. Probeer het opnieuw.', inv: 'Controleer uw gegevens.', retry: 'Opnieuw proberen', wait: 'Een moment…' },
    pl: { open: 'Otwórz czat', close: 'Zamknij czat', title: 'Asystent', hello: 'Dzień dobry! W czym mogę pomóc?', ph: 'Zadaj pytanie…', q: 'Twoje pytanie', send: 'Wyślij', log: 'Rozmowa', src: 'Źródła', src1: 'Źródło', up: 'Pomocne', down: 'Niepomocne', thx: 'Dziękujemy za opinię.', talk: 'Porozmawiaj z konsultantem', intro: 'Zostaw swoje dane, a skontaktujemy się z Tobą.', name: 'Imię i nazwisko', email: 'Adres e-mail', msg: 'Wiadomość', opt: 'opcjonalnie', submit: 'Wyślij', back: 'Wstecz', bad: 'Podaj prawidłowy adres e-mail.', sent: 'Dziękujemy! Wkrótce się z Tobą skontaktujemy.', rate: 'Zbyt wiele zapytań. Spróbuj ponownie za chwilę ({n}).', rate0: 'Zbyt wiele zapytań. Spróbuj ponownie za chwilę.', net: 'Brak połączenia. Sprawdź połączenie i spróbuj ponownie.', cut: 'Połączenie zostało przerwane. Odpowiedź może być niepełna.', err: 'Przepraszamy, wystąpił błąd. Spróbuj ponownie.', inv: 'Sprawdź wprowadzone dane.', retry: 'Spróbuj ponownie', wait: 'Chwileczkę…' },
    sv: { open: 'Öppna chatten', close: 'Stäng chatten', title: 'Assistent', hello: 'Hej! Hur kan jag hjälpa dig?', ph: 'Ställ en fråga…', q: 'Din fråga', send: 'Skicka', log: 'Konversation', src: 'Källor', src1: 'Källa', up: 'Hjälpsamt', down: 'Inte hjälpsamt', thx: 'Tack för din återkoppling.', talk: 'Prata med en person', intro: 'Lämna dina uppgifter så hör vi av oss.', name: 'Namn', email: 'E-post', msg: 'Meddelande', opt: 'valfritt', submit: 'Skicka', back: 'Tillbaka', bad: 'Ange en giltig e-postadress.', sent: 'Tack! Vi hör av oss snart.', rate: 'För många förfrågningar. Försök igen om {n}.', rate0: 'För många förfrågningar. Försök igen om en stund.', net: 'Ingen anslutning. Kontrollera din anslutning och försök igen.', cut: 'Anslutningen avbröts. Svaret kan vara ofullständigt.', err: 'Något gick fel. Försök igen.', inv: 'Kontrollera dina uppgifter.', retry: 'Försök igen', wait: 'Ett ögonblick…' },
    ja: { open: 'チャットを開く', close: 'チャットを閉じる', title: 'アシスタント', hello: 'こんにちは！ご質問をどうぞ。', ph: '質問を入力してください…', q: 'ご質問', send: '送信', log: '会話', src: '出典', src1: '出典', up: '役に立った', down: '役に立たなかった', thx: 'フィードバックありがとうございます。', talk: '担当者と話す', intro: '連絡先をご記入いただければ、折り返しご連絡いたします。', name: 'お名前', email: 'メールアドレス', msg: 'メッセージ', opt: '任意', submit: '送信', back: '戻る', bad: '有効なメールアドレスを入力してください。', sent: 'ありがとうございます。近日中にご連絡いたします。', rate: 'リクエストが多すぎます。{n}後にもう一度お試しください。', rate0: 'リクエストが多すぎます。しばらくしてからもう一度お試しください。', net: '接続できません。接続を確認してもう一度お試しください。', cut: '接続が中断されました。回答が不完全な可能性があります。', err: 'エラーが発生しました。もう一度お試しください。', inv: '入力内容をご確認ください。', retry: '再試行', wait: 'お待ちください…' },
    zh: { open: '打开聊天', close: '关闭聊天', title: '助手', hello: '您好！有什么可以帮您？', ph: '请输入您的问题…', q: '您的问题', send: '发送', log: '对话', src: '来源', src1: '来源', up: '有帮助', down: '没有帮助', thx: '感谢您的反馈。', talk: '联系人工客服', intro: '请留下您的联系方式，我们会尽快与您联系。', name: '姓名', email: '电子邮箱', msg: '留言', opt: '选填', submit: '提交', back: '返回', bad: '请输入有效的电子邮箱地址。', sent: '谢谢！我们会尽快与您联系。', rate: '请求过多，请在{n}后重试。', rate0: '请求过多，请稍后重试。', net: '无法连接。请检查网络连接后重试。', cut: '连接已中断，回答可能不完整。', err: '抱歉，出现错误。请重试。', inv: '请检查您填写的内容。', retry: '重试', wait: '请稍候…' },
    ar: { open: 'فتح المحادثة', close: 'إغلاق المحادثة', title: 'المساعد', hello: 'مرحبًا! كيف يمكنني مساعدتك؟', ph: 'اطرح سؤالًا…', q: 'سؤالك', send: 'إرسال', log: 'المحادثة', src: 'المصادر', src1: 'المصدر', up: 'مفيد', down: 'غير مفيد', thx: 'شكرًا على ملاحظاتك.', talk: 'التحدث إلى موظف', intro: 'اترك بياناتك وسنتواصل معك.', name: 'الاسم', email: 'البريد الإلكتروني', msg: 'الرسالة', opt: 'اختياري', submit: 'إرسال', back: 'رجوع', bad: 'يُرجى إدخال بريد إلكتروني صالح.', sent: 'شكرًا لك! سنتواصل معك قريبًا.', rate: 'طلبات كثيرة جدًا. يُرجى المحاولة مرة أخرى بعد {n}.', rate0: 'طلبات كثيرة جدًا. يُرجى المحاولة مرة أخرى بعد قليل.', net: 'لا يوجد اتصال. يُرجى التحقق من الاتصال والمحاولة مرة أخرى.', cut: 'انقطع الاتصال. قد تكون الإجابة غير مكتملة.', err: 'عذرًا، حدث خطأ. يُرجى المحاولة مرة أخرى.', inv: 'يُرجى التحقق من البيانات المدخلة.', retry: 'إعادة المحاولة', wait: 'لحظة من فضلك…' },
    ru: { open: 'Открыть чат', close: 'Закрыть чат', title: 'Ассистент', hello: 'Здравствуйте! Чем могу помочь?', ph: 'Задайте вопрос…', q: 'Ваш вопрос', send: 'Отправить', log: 'Диалог', src: 'Источники', src1: 'Источник', up: 'Полезно', down: 'Бесполезно', thx: 'Спасибо за отзыв.', talk: 'Связаться с сотрудником', intro: 'Оставьте свои контакты, и мы с вами свяжемся.', name: 'Имя', email: 'Электронная почта', msg: 'Сообщение', opt: 'необязательно', submit: 'Отправить', back: 'Назад', bad: 'Введите действительный адрес электронной почты.', sent: 'Спасибо! Мы скоро с вами свяжемся.', rate: 'Слишком много запросов. Повторите попытку позже. Осталось ждать: {n}.', rate0: 'Слишком много запросов. Повторите попытку чуть позже.', net: 'Нет соединения. Проверьте подключение и повторите попытку.', cut: 'Соединение прервано. Ответ может быть неполным.', err: 'Произошла ошибка. Повторите попытку.', inv: 'Проверьте введённые данные.', retry: 'Повторить', wait: 'Минутку…' },
    uk: { open: 'Відкрити чат', close: 'Закрити чат', title: 'Асистент', hello: 'Вітаємо! Чим можу допомогти?', ph: 'Поставте запитання…', q: 'Ваше запитання', send: 'Надіслати', log: 'Розмова', src: 'Джерела', src1: 'Джерело', up: 'Корисно', down: 'Некорисно', thx: 'Дякуємо за відгук.', talk: 'Зв’язатися з працівником', intro: 'Залиште свої контакти, і ми з вами зв’яжемося.', name: 'Ім’я', email: 'Електронна пошта', msg: 'Повідомлення', opt: 'необов’язково', submit: 'Надіслати', back: 'Назад', bad: 'Введіть дійсну адресу електронної пошти.', sent: 'Дякуємо! Ми незабаром з вами зв’яжемося.', rate: 'Забагато запитів. Спробуйте ще раз пізніше. Залишилося чекати: {n}.', rate0: 'Забагато запитів. Спробуйте ще раз трохи пізніше.', net: 'Немає з’єднання. Перевірте підключення та спробуйте ще раз.', cut: 'З’єднання перервано. Відповідь може бути неповною.', err: 'Сталася помилка. Спробуйте ще раз.', inv: 'Перевірте введені дані.', retry: 'Повторити', wait: 'Хвилинку…' },
    bg: { open: 'Отваряне на чата', close: 'Затваряне на чата', title: 'Асистент', hello: 'Здравейте! С какво мога да помогна?', ph: 'Задайте въпрос…', q: 'Вашият въпрос', send: 'Изпращане', log: 'Разговор', src: 'Източници', src1: 'Източник', up: 'Полезно', down: 'Не е полезно', thx: 'Благодарим за отзива.', talk: 'Връзка със служител', intro: 'Оставете данните си за контакт и ще се свържем с вас.', name: 'Име', email: 'Имейл', msg: 'Съобщение', opt: 'по избор', submit: 'Изпращане', back: 'Назад', bad: 'Въведете валиден имейл адрес.', sent: 'Благодарим! Скоро ще се свържем с вас.', rate: 'Твърде много заявки. Опитайте отново след {n}.', rate0: 'Твърде много заявки. Опитайте отново малко по-късно.', net: 'Няма връзка. Проверете връзката си и опитайте отново.', cut: 'Връзката беше прекъсната. Отговорът може да е непълен.', err: 'Възникна грешка. Опитайте отново.', inv: 'Проверете въведените данни.', retry: 'Опитайте отново', wait: 'Момент…' },
    tr: { open: 'Sohbeti aç', close: 'Sohbeti kapat', title: 'Asistan', hello: 'Merhaba! Size nasıl yardımcı olabilirim?', ph: 'Bir soru sorun…', q: 'Sorunuz', send: 'Gönder', log: 'Sohbet', src: 'Kaynaklar', src1: 'Kaynak', up: 'Faydalı', down: 'Faydalı değil', thx: 'Geri bildiriminiz için teşekkürler.', talk: 'Bir çalışanla görüşün', intro: 'İletişim bilgilerinizi bırakın, size geri dönelim.', name: 'Ad', email: 'E-posta', msg: 'Mesaj', opt: 'isteğe bağlı', submit: 'Gönder', back: 'Geri', bad: 'Lütfen geçerli bir e-posta adresi girin.', sent: 'Teşekkürler! En kısa sürede size dönüş yapacağız.', rate: 'Çok fazla istek. Lütfen {n} sonra tekrar deneyin.', rate0: 'Çok fazla istek. Lütfen biraz sonra tekrar deneyin.', net: 'Bağlantı yok. Bağlantınızı kontrol edip tekrar deneyin.', cut: 'Bağlantı kesildi. Yanıt eksik olabilir.', err: 'Bir hata oluştu. Lütfen tekrar deneyin.', inv: 'Lütfen girdiğiniz bilgileri kontrol edin.', retry: 'Tekrar dene', wait: 'Bir dakika…' },
    el: { open: 'Άνοιγμα συνομιλίας', close: 'Κλείσιμο συνομιλίας', title: 'Βοηθός', hello: 'Γεια σας! Πώς μπορώ να σας βοηθήσω;', ph: 'Κάντε μια ερώτηση…', q: 'Η ερώτησή σας', send: 'Αποστολή', log: 'Συνομιλία', src: 'Πηγές', src1: 'Πηγή', up: 'Χρήσιμο', down: 'Μη χρήσιμο', thx: 'Ευχαριστούμε για τα σχόλιά σας.', talk: 'Μιλήστε με έναν υπάλληλο', intro: 'Αφήστε τα στοιχεία σας και θα επικοινωνήσουμε μαζί σας.', name: 'Όνομα', email: 'Email', msg: 'Μήνυμα', opt: 'προαιρετικό', submit: 'Αποστολή', back: 'Πίσω', bad: 'Εισαγάγετε μια έγκυρη διεύθυνση email.', sent: 'Ευχαριστούμε! Θα επικοινωνήσουμε σύντομα μαζί σας.', rate: 'Πάρα πολλά αιτήματα. Δοκιμάστε ξανά σε {n}.', rate0: 'Πάρα πολλά αιτήματα. Δοκιμάστε ξανά σε λίγο.', net: 'Δεν υπάρχει σύνδεση. Ελέγξτε τη σύνδεσή σας και δοκιμάστε ξανά.', cut: 'Η σύνδεση διακόπηκε. Η απάντηση μπορεί να είναι ελλιπής.', err: 'Παρουσιάστηκε σφάλμα. Δοκιμάστε ξανά.', inv: 'Ελέγξτε τα στοιχεία που εισαγάγατε.', retry: 'Δοκιμάστε ξανά', wait: 'Μια στιγμή…' },
    hi: { open: 'चैट खोलें', close: 'चैट बंद करें', title: 'सहायक', hello: 'नमस्ते! मैं आपकी कैसे मदद कर सकता हूँ?', ph: 'अपना प्रश्न पूछें…', q: 'आपका प्रश्न', send: 'भेजें', log: 'बातचीत', src: 'स्रोत', src1: 'स्रोत', up: 'उपयोगी', down: 'उपयोगी नहीं', thx: 'आपकी प्रतिक्रिया के लिए धन्यवाद।', talk: 'किसी व्यक्ति से बात करें', intro: 'अपनी संपर्क जानकारी छोड़ें, हम आपसे संपर्क करेंगे।', name: 'नाम', email: 'ईमेल', msg: 'संदेश', opt: 'वैकल्पिक', submit: 'भेजें', back: 'वापस', bad: 'कृपया एक मान्य ईमेल पता दर्ज करें।', sent: 'धन्यवाद! हम जल्द ही आपसे संपर्क करेंगे।', rate: 'बहुत अधिक अनुरोध। कृपया {n} बाद फिर से प्रयास करें।', rate0: 'बहुत अधिक अनुरोध। कृपया थोड़ी देर बाद फिर से प्रयास करें।', net: 'कोई कनेक्शन नहीं। अपना कनेक्शन जाँचें और फिर से प्रयास करें।', cut: 'कनेक्शन टूट गया। उत्तर अधूरा हो सकता है।', err: 'कोई त्रुटि हुई। कृपया फिर से प्रयास करें।', inv: 'कृपया दर्ज की गई जानकारी जाँचें।', retry: 'फिर से प्रयास करें', wait: 'एक क्षण…' },
    th: { open: 'เปิดแชท', close: 'ปิดแชท', title: 'ผู้ช่วย', hello: 'สวัสดี! มีอะไรให้ช่วยไหม', ph: 'พิมพ์คำถามของคุณ…', q: 'คำถามของคุณ', send: 'ส่ง', log: 'การสนทนา', src: 'แหล่งที่มา', src1: 'แหล่งที่มา', up: 'มีประโยชน์', down: 'ไม่มีประโยชน์', thx: 'ขอบคุณสำหรับความคิดเห็น', talk: 'คุยกับเจ้าหน้าที่', intro: 'ฝากข้อมูลติดต่อไว้ แล้วเราจะติดต่อกลับ', name: 'ชื่อ', email: 'อีเมล', msg: 'ข้อความ', opt: 'ไม่บังคับ', submit: 'ส่ง', back: 'ย้อนกลับ', bad: 'กรุณากรอกอีเมลที่ถูกต้อง', sent: 'ขอบคุณ! เราจะติดต่อกลับโดยเร็ว', rate: 'มีคำขอมากเกินไป กรุณาลองใหม่ใน {n}', rate0: 'มีคำขอมากเกินไป กรุณาลองใหม่อีกครั้งในภายหลัง', net: 'ไม่มีการเชื่อมต่อ กรุณาตรวจสอบการเชื่อมต่อแล้วลองใหม่', cut: 'การเชื่อมต่อขาดหาย คำตอบอาจไม่ครบถ้วน', err: 'เกิดข้อผิดพลาด กรุณาลองใหม่', inv: 'กรุณาตรวจสอบข้อมูลที่กรอก', retry: 'ลองใหม่', wait: 'สักครู่…' },
    vi: { open: 'Mở trò chuyện', close: 'Đóng trò chuyện', title: 'Trợ lý', hello: 'Xin chào! Tôi có thể giúp gì cho bạn?', ph: 'Đặt câu hỏi…', q: 'Câu hỏi của bạn', send: 'Gửi', log: 'Cuộc trò chuyện', src: 'Nguồn', src1: 'Nguồn', up: 'Hữu ích', down: 'Không hữu ích', thx: 'Cảm ơn bạn đã phản hồi.', talk: 'Nói chuyện với nhân viên', intro: 'Hãy để lại thông tin liên hệ, chúng tôi sẽ liên lạc với bạn.', name: 'Tên', email: 'Email', msg: 'Tin nhắn', opt: 'không bắt buộc', submit: 'Gửi', back: 'Quay lại', bad: 'Vui lòng nhập địa chỉ email hợp lệ.', sent: 'Cảm ơn bạn! Chúng tôi sẽ sớm liên hệ lại.', rate: 'Quá nhiều yêu cầu. Vui lòng thử lại sau {n}.', rate0: 'Quá nhiều yêu cầu. Vui lòng thử lại sau ít phút.', net: 'Không có kết nối. Vui lòng kiểm tra kết nối và thử lại.', cut: 'Kết nối bị gián đoạn. Câu trả lời có thể chưa đầy đủ.', err: 'Đã xảy ra lỗi. Vui lòng thử lại.', inv: 'Vui lòng kiểm tra thông tin đã nhập.', retry: 'Thử lại', wait: 'Chờ một chút…' },
    ko: { open: '채팅 열기', close: '채팅 닫기', title: '도우미', hello: '안녕하세요! 무엇을 도와드릴까요?', ph: '질문을 입력하세요…', q: '질문', send: '보내기', log: '대화', src: '출처', src1: '출처', up: '도움이 됨', down: '도움이 안 됨', thx: '의견을 보내 주셔서 감사합니다.', talk: '상담원과 대화하기', intro: '연락처를 남겨 주시면 다시 연락드리겠습니다.', name: '이름', email: '이메일', msg: '메시지', opt: '선택 사항', submit: '보내기', back: '뒤로', bad: '올바른 이메일 주소를 입력하세요.', sent: '감사합니다! 곧 연락드리겠습니다.', rate: '요청이 너무 많습니다. {n} 후에 다시 시도하세요.', rate0: '요청이 너무 많습니다. 잠시 후 다시 시도하세요.', net: '연결되지 않았습니다. 연결 상태를 확인하고 다시 시도하세요.', cut: '연결이 끊어졌습니다. 답변이 완전하지 않을 수 있습니다.', err: '죄송합니다. 문제가 발생했습니다. 다시 시도하세요.', inv: '입력한 내용을 확인하세요.', retry: '다시 시도', wait: '생각 중…' },
    he: { open: 'פתיחת הצ׳אט', close: 'סגירת הצ׳אט', title: 'עוזר', hello: 'שלום! איך אפשר לעזור?', ph: 'שאלו שאלה…', q: 'השאלה שלך', send: 'שליחה', log: 'שיחה', src: 'מקורות', src1: 'מקור', up: 'מועיל', down: 'לא מועיל', thx: 'תודה על המשוב.', talk: 'שיחה עם נציג', intro: 'השאירו פרטים ונחזור אליכם.', name: 'שם', email: 'דוא״ל', msg: 'הודעה', opt: 'לא חובה', submit: 'שליחה', back: 'חזרה', bad: 'נא להזין כתובת דוא״ל תקינה.', sent: 'תודה! נחזור אליכם בהקדם.', rate: 'יותר מדי בקשות. נא לנסות שוב בעוד {n}.', rate0: 'יותר מדי בקשות. נא לנסות שוב בעוד רגע.', net: 'אין חיבור. נא לבדוק את החיבור ולנסות שוב.', cut: 'החיבור נקטע. ייתכן שהתשובה חלקית.', err: 'מצטערים, משהו השתבש. נא לנסות שוב.', inv: 'נא לבדוק את הפרטים שהוזנו.', retry: 'ניסיון נוסף', wait: 'רגע…' },
    da: { open: 'Åbn chat', close: 'Luk chat', title: 'Assistent', hello: 'Hej! Hvordan kan jeg hjælpe dig?', ph: 'Stil et spørgsmål…', q: 'Dit spørgsmål', send: 'Send', log: 'Samtale', src: 'Kilder', src1: 'Kilde', up: 'Nyttigt', down: 'Ikke nyttigt', thx: 'Tak for din feedback.', talk: 'Tal med en person', intro: 'Efterlad dine oplysninger, så vender vi tilbage til dig.', name: 'Navn', email: 'E-mail', msg: 'Besked', opt: 'valgfrit', submit: 'Send', back: 'Tilbage', bad: 'Indtast en gyldig e-mailadresse.', sent: 'Tak! Vi vender snart tilbage til dig.', rate: 'For mange forespørgsler. Prøv igen om {n}.', rate0: 'For mange forespørgsler. Prøv igen om et øjeblik.', net: 'Ingen forbindelse. Kontrollér din forbindelse, og prøv igen.', cut: 'Forbindelsen blev afbrudt. Svaret kan være ufuldstændigt.', err: 'Beklager, noget gik galt. Prøv igen.', inv: 'Kontrollér dine oplysninger.', retry: 'Prøv igen', wait: 'Et øjeblik…' },
    fi: { open: 'Avaa chat', close: 'Sulje chat', title: 'Avustaja', hello: 'Hei! Miten voin auttaa?', ph: 'Kysy jotain…', q: 'Kysymyksesi', send: 'Lähetä', log: 'Keskustelu', src: 'Lähteet', src1: 'Lähde', up: 'Hyödyllinen', down: 'Ei hyödyllinen', thx: 'Kiitos palautteestasi.', talk: 'Keskustele ihmisen kanssa', intro: 'Jätä yhteystietosi, niin otamme sinuun yhteyttä.', name: 'Nimi', email: 'Sähköposti', msg: 'Viesti', opt: 'valinnainen', submit: 'Lähetä', back: 'Takaisin', bad: 'Anna kelvollinen sähköpostiosoite.', sent: 'Kiitos! Otamme sinuun pian yhteyttä.', rate: 'Liian monta pyyntöä. Odota {n} ja yritä uudelleen.', rate0: 'Liian monta pyyntöä. Yritä hetken kuluttua uudelleen.', net: 'Ei yhteyttä. Tarkista yhteys ja yritä uudelleen.', cut: 'Yhteys katkesi. Vastaus voi olla puutteellinen.', err: 'Valitettavasti jokin meni vikaan. Yritä uudelleen.', inv: 'Tarkista antamasi tiedot.', retry: 'Yritä uudelleen', wait: 'Hetkinen…' },
    cs: { open: 'Otevřít chat', close: 'Zavřít chat', title: 'Asistent', hello: 'Dobrý den! Jak vám mohu pomoci?', ph: 'Zeptejte se…', q: 'Váš dotaz', send: 'Odeslat', log: 'Konverzace', src: 'Zdroje', src1: 'Zdroj', up: 'Užitečné', down: 'Neužitečné', thx: 'Děkujeme za zpětnou vazbu.', talk: 'Mluvit s člověkem', intro: 'Zanechte nám své údaje a ozveme se vám.', name: 'Jméno', email: 'E-mail', msg: 'Zpráva', opt: 'nepovinné', submit: 'Odeslat', back: 'Zpět', bad: 'Zadejte platnou e-mailovou adresu.', sent: 'Děkujeme! Brzy se vám ozveme.', rate: 'Příliš mnoho požadavků. Zkuste to znovu později. Zbývající čas: {n}.', rate0: 'Příliš mnoho požadavků. Zkuste to znovu za chvíli.', net: 'Nejste připojeni. Zkontrolujte připojení a zkuste to znovu.', cut: 'Spojení bylo přerušeno. Odpověď nemusí být úplná.', err: 'Omlouváme se, něco se pokazilo. Zkuste to znovu.', inv: 'Zkontrolujte zadané údaje.', retry: 'Zkusit znovu', wait: 'Moment…' },
    ro: { open: 'Deschide chatul', close: 'Închide chatul', title: 'Asistent', hello: 'Bună ziua! Cu ce vă pot ajuta?', ph: 'Puneți o întrebare…', q: 'Întrebarea dumneavoastră', send: 'Trimite', log: 'Conversație', src: 'Surse', src1: 'Sursă', up: 'Util', down: 'Nu este util', thx: 'Vă mulțumim pentru feedback.', talk: 'Vorbiți cu o persoană', intro: 'Lăsați-ne datele dumneavoastră și vă vom contacta.', name: 'Nume', email: 'E-mail', msg: 'Mesaj', opt: 'opțional', submit: 'Trimite', back: 'Înapoi', bad: 'Introduceți o adresă de e-mail validă.', sent: 'Vă mulțumim! Vă vom contacta în curând.', rate: 'Prea multe solicitări. Încercați din nou peste {n}.', rate0: 'Prea multe solicitări. Încercați din nou în câteva momente.', net: 'Nu există conexiune. Verificați conexiunea și încercați din nou.', cut: 'Conexiunea a fost întreruptă. Răspunsul poate fi incomplet.', err: 'Ne pare rău, a apărut o eroare. Încercați din nou.', inv: 'Verificați datele introduse.', retry: 'Încercați din nou', wait: 'Un moment…' },
    hu: { open: 'Csevegés megnyitása', close: 'Csevegés bezárása', title: 'Asszisztens', hello: 'Üdvözöljük! Miben segíthetek?', ph: 'Tegyen fel egy kérdést…', q: 'Az Ön kérdése', send: 'Küldés', log: 'Beszélgetés', src: 'Források', src1: 'Forrás', up: 'Hasznos', down: 'Nem hasznos', thx: 'Köszönjük a visszajelzését.', talk: 'Beszélgetés egy munkatárssal', intro: 'Adja meg az adatait, és felvesszük Önnel a kapcsolatot.', name: 'Név', email: 'E-mail', msg: 'Üzenet', opt: 'nem kötelező', submit: 'Küldés', back: 'Vissza', bad: 'Adjon meg egy érvényes e-mail-címet.', sent: 'Köszönjük! Hamarosan felvesszük Önnel a kapcsolatot.', rate: 'Túl sok kérés. Próbálja újra ennyi idő múlva: {n}.', rate0: 'Túl sok kérés. Próbálja újra egy kis idő múlva.', net: 'Nincs kapcsolat. Ellenőrizze a kapcsolatot, és próbálja újra.', cut: 'A kapcsolat megszakadt. Előfordulhat, hogy a válasz hiányos.', err: 'Sajnáljuk, hiba történt. Próbálja újra.', inv: 'Ellenőrizze a megadott adatokat.', retry: 'Újra', wait: 'Egy pillanat…' },
    id: { open: 'Buka obrolan', close: 'Tutup obrolan', title: 'Asisten', hello: 'Halo! Ada yang bisa saya bantu?', ph: 'Ajukan pertanyaan…', q: 'Pertanyaan Anda', send: 'Kirim', log: 'Percakapan', src: 'Sumber', src1: 'Sumber', up: 'Membantu', down: 'Tidak membantu', thx: 'Terima kasih atas masukan Anda.', talk: 'Bicara dengan petugas', intro: 'Tinggalkan data Anda dan kami akan menghubungi Anda kembali.', name: 'Nama', email: 'Email', msg: 'Pesan', opt: 'opsional', submit: 'Kirim', back: 'Kembali', bad: 'Masukkan alamat email yang valid.', sent: 'Terima kasih! Kami akan segera menghubungi Anda.', rate: 'Terlalu banyak permintaan. Coba lagi dalam {n}.', rate0: 'Terlalu banyak permintaan. Coba lagi sebentar lagi.', net: 'Tidak ada koneksi. Periksa koneksi Anda dan coba lagi.', cut: 'Koneksi terputus. Jawaban mungkin tidak lengkap.', err: 'Maaf, terjadi kesalahan. Silakan coba lagi.', inv: 'Periksa kembali data yang Anda masukkan.', retry: 'Coba lagi', wait: 'Sebentar…' },
  };
  // Live hand-off ({n}: the person's display name).
  const TH = {
    en: { hwait: 'Waiting for a person to join… You can keep writing here.', hcancel: 'Cancel', hend: 'End chat', hwith: 'You are chatting with {n}.', hjoined: '{n} joined the conversation.', hback: 'The assistant is answering again.', hclosed: 'The chat with a person has ended.', hmissed: 'Nobody could join right now. Leave your details and we will get back to you.' },
    de: { hwait: 'Wir warten auf eine Person… Sie können hier weiterschreiben.', hcancel: 'Abbrechen', hend: 'Chat beenden', hwith: 'Sie chatten mit {n}.', hjoined: '{n} ist der Unterhaltung beigetreten.', hback: 'Der Assistent antwortet wieder.', hclosed: 'Der Chat mit einer Person ist beendet.', hmissed: 'Gerade ist niemand verfügbar. Hinterlassen Sie Ihre Kontaktdaten, wir melden uns bei Ihnen.' },
    fr: { hwait: 'En attente d’une personne… Vous pouvez continuer à écrire ici.', hcancel: 'Annuler', hend: 'Terminer le chat', hwith: 'Vous discutez avec {n}.', hjoined: '{n} a rejoint la conversation.', hback: 'L’assistant répond à nouveau.', hclosed: 'Le chat avec une personne est terminé.', hmissed: 'Personne n’est disponible pour le moment. Laissez vos coordonnées et nous vous recontacterons.' },
    es: { hwait: 'Esperando a una persona… Puede seguir escribiendo aquí.', hcancel: 'Cancelar', hend: 'Terminar chat', hwith: 'Está chateando con {n}.', hjoined: '{n} se ha unido a la conversación.', hback: 'El asistente vuelve a responder.', hclosed: 'El chat con una persona ha terminado.', hmissed: 'Ahora mismo no hay nadie disponible. Déjenos sus datos y nos pondremos en contacto con usted.' },
    it: { hwait: 'In attesa di una persona… Puoi continuare a scrivere qui.', hcancel: 'Annulla', hend: 'Termina la chat', hwith: 'Stai chattando con {n}.', hjoined: '{n} si è unito alla conversazione.', hback: 'L’assistente risponde di nuovo.', hclosed: 'La chat con una persona è terminata.', hmissed: 'Al momento non è disponibile nessuno. Lascia i tuoi dati e ti ricontatteremo.' },
    pt: { hwait: 'Aguardando uma pessoa… Você pode continuar escrevendo aqui.', hcancel: 'Cancelar', hend: 'Encerrar chat', hwith: 'Você está conversando com {n}.', hjoined: '{n} entrou na conversa.', hback: 'O assistente voltou a responder.', hclosed: 'O chat com uma pessoa foi encerrado.', hmissed: 'Ninguém está disponível agora. Deixe seus dados e entraremos em contato.' },
    nl: { hwait: 'Wachten op een medewerker… U kunt hier verder schrijven.', hcancel: 'Annuleren', hend: 'Chat beëindigen', hwith: 'U chat met {n}.', hjoined: '{n} neemt deel aan het gesprek.', hback: 'De assistent antwoordt weer.', hclosed: 'De chat met een medewerker is beëindigd.', hmissed: 'Er is nu niemand beschikbaar. Laat uw gegevens achter, dan nemen wij contact met u op.' },
    pl: { hwait: 'Czekamy na konsultanta… Możesz dalej pisać tutaj.', hcancel: 'Anuluj', hend: 'Zakończ czat', hwith: 'Rozmawiasz z: {n}.', hjoined: '{n} dołącza do rozmowy.', hback: 'Asystent znów odpowiada.', hclosed: 'Czat z konsultantem został zakończony.', hmissed: 'Nikt nie jest teraz dostępny. Zostaw swoje dane, a skontaktujemy się z Tobą.' },
    sv: { hwait: 'Väntar på en person… Du kan fortsätta skriva här.', hcancel: 'Avbryt', hend: 'Avsluta chatten', hwith: 'Du chattar med {n}.', hjoined: '{n} anslöt till konversationen.', hback: 'Assistenten svarar igen.', hclosed: 'Chatten med en person har avslutats.', hmissed: 'Ingen kan ansluta just nu. Lämna dina uppgifter så hör vi av oss.' },
    ja: { hwait: '担当者を待っています… このまま入力を続けられます。', hcancel: 'キャンセル', hend: 'チャットを終了', hwith: '{n}とチャット中です。', hjoined: '{n}が会話に参加しました。', hback: 'アシスタントが再び回答します。', hclosed: '担当者とのチャットは終了しました。', hmissed: '現在対応できる担当者がいません。連絡先をご記入いただければ、折り返しご連絡いたします。' },
    zh: { hwait: '正在等待人工客服… 您可以继续在此输入。', hcancel: '取消', hend: '结束聊天', hwith: '您正在与{n}聊天。', hjoined: '{n}加入了对话。', hback: '助手将继续为您解答。', hclosed: '与人工客服的聊天已结束。', hmissed: '目前没有人工客服。请留下您的联系方式，我们会尽快与您联系。' },
    ar: { hwait: 'في انتظار موظف… يمكنك متابعة الكتابة هنا.', hcancel: 'إلغاء', hend: 'إنهاء المحادثة', hwith: 'أنت تتحدث مع {n}.', hjoined: 'انضم {n} إلى المحادثة.', hback: 'المساعد يجيب مرة أخرى.', hclosed: 'انتهت المحادثة مع الموظف.', hmissed: 'لا يوجد أحد متاح الآن. اترك بياناتك وسنتواصل معك.' },
    ru: { hwait: 'Ожидаем сотрудника… Вы можете продолжать писать здесь.', hcancel: 'Отмена', hend: 'Завершить чат', hwith: 'Вы общаетесь с: {n}.', hjoined: '{n} присоединяется к разговору.', hback: 'Снова отвечает ассистент.', hclosed: 'Чат с сотрудником завершён.', hmissed: 'Сейчас никто не может подключиться. Оставьте свои контакты, и мы с вами свяжемся.' },
    uk: { hwait: 'Очікуємо на працівника… Ви можете продовжувати писати тут.', hcancel: 'Скасувати', hend: 'Завершити чат', hwith: 'Ви спілкуєтеся з: {n}.', hjoined: '{n} приєднується до розмови.', hback: 'Знову відповідає асистент.', hclosed: 'Чат із працівником завершено.', hmissed: 'Зараз ніхто не може під’єднатися. Залиште свої контакти, і ми з вами зв’яжемося.' },
    bg: { hwait: 'Изчакваме служител… Можете да продължите да пишете тук.', hcancel: 'Отказ', hend: 'Край на чата', hwith: 'Разговаряте с: {n}.', hjoined: '{n} се присъедини към разговора.', hback: 'Асистентът отново отговаря.', hclosed: 'Чатът със служител приключи.', hmissed: 'В момента няма свободен служител. Оставете данните си за контакт и ще се свържем с вас.' },
    tr: { hwait: 'Bir çalışanın katılması bekleniyor… Buraya yazmaya devam edebilirsiniz.', hcancel: 'İptal', hend: 'Sohbeti bitir', hwith: 'Görüştüğünüz kişi: {n}.', hjoined: '{n} sohbete katıldı.', hback: 'Asistan yeniden yanıtlıyor.', hclosed: 'Çalışanla sohbet sona erdi.', hmissed: 'Şu anda kimse katılamıyor. İletişim bilgilerinizi bırakın, size geri dönelim.' },
    el: { hwait: 'Αναμονή για έναν υπάλληλο… Μπορείτε να συνεχίσετε να γράφετε εδώ.', hcancel: 'Ακύρωση', hend: 'Τέλος συνομιλίας', hwith: 'Συνομιλείτε με: {n}.', hjoined: '{n}: συμμετέχει στη συνομιλία.', hback: 'Απαντά ξανά ο βοηθός.', hclosed: 'Η συνομιλία με τον υπάλληλο έληξε.', hmissed: 'Κανείς δεν είναι διαθέσιμος αυτή τη στιγμή. Αφήστε τα στοιχεία σας και θα επικοινωνήσουμε μαζί σας.' },
    hi: { hwait: 'किसी व्यक्ति के जुड़ने की प्रतीक्षा है… आप यहाँ लिखना जारी रख सकते हैं।', hcancel: 'रद्द करें', hend: 'चैट समाप्त करें', hwith: 'आप {n} से बात कर रहे हैं।', hjoined: '{n} बातचीत में शामिल हुए।', hback: 'सहायक फिर से उत्तर दे रहा है।', hclosed: 'व्यक्ति के साथ चैट समाप्त हो गई।', hmissed: 'अभी कोई उपलब्ध नहीं है। अपनी संपर्क जानकारी छोड़ें, हम आपसे संपर्क करेंगे।' },
    th: { hwait: 'กำลังรอเจ้าหน้าที่… คุณพิมพ์ต่อได้ที่นี่', hcancel: 'ยกเลิก', hend: 'จบการแชท', hwith: 'คุณกำลังคุยกับ {n}', hjoined: '{n} เข้าร่วมการสนทนาแล้ว', hback: 'ผู้ช่วยกลับมาตอบอีกครั้ง', hclosed: 'การแชทกับเจ้าหน้าที่สิ้นสุดแล้ว', hmissed: 'ขณะนี้ไม่มีเจ้าหน้าที่ว่าง ฝากข้อมูลติดต่อไว้ แล้วเราจะติดต่อกลับ' },
    vi: { hwait: 'Đang chờ nhân viên… Bạn có thể tiếp tục nhập tại đây.', hcancel: 'Hủy', hend: 'Kết thúc trò chuyện', hwith: 'Bạn đang trò chuyện với {n}.', hjoined: '{n} đã tham gia cuộc trò chuyện.', hback: 'Trợ lý đang trả lời lại.', hclosed: 'Cuộc trò chuyện với nhân viên đã kết thúc.', hmissed: 'Hiện không có ai rảnh. Hãy để lại thông tin liên hệ, chúng tôi sẽ liên lạc với bạn.' },
    ko: { hwait: '상담원 연결을 기다리는 중입니다… 여기에 계속 입력하셔도 됩니다.', hcancel: '취소', hend: '채팅 종료', hwith: '{n} 님과 대화 중입니다.', hjoined: '{n} 님이 대화에 참여했습니다.', hback: '도우미가 다시 답변합니다.', hclosed: '상담원과의 채팅이 종료되었습니다.', hmissed: '지금은 연결할 수 있는 상담원이 없습니다. 연락처를 남겨 주시면 다시 연락드리겠습니다.' },
    he: { hwait: 'ממתינים לנציג… אפשר להמשיך לכתוב כאן.', hcancel: 'ביטול', hend: 'סיום השיחה', hwith: 'השיחה שלך היא עם {n}.', hjoined: '{n} נמצא/ת כעת בשיחה.', hback: 'העוזר עונה שוב.', hclosed: 'השיחה עם הנציג הסתיימה.', hmissed: 'אין כרגע נציג זמין. השאירו פרטים ונחזור אליכם.' },
    da: { hwait: 'Venter på, at en medarbejder deltager… Du kan fortsætte med at skrive her.', hcancel: 'Annuller', hend: 'Afslut chat', hwith: 'Du chatter med {n}.', hjoined: '{n} deltager nu i samtalen.', hback: 'Assistenten svarer igen.', hclosed: 'Chatten med en medarbejder er afsluttet.', hmissed: 'Ingen kunne deltage lige nu. Efterlad dine oplysninger, så vender vi tilbage til dig.' },
    fi: { hwait: 'Odotetaan, että joku liittyy keskusteluun… Voit jatkaa kirjoittamista tähän.', hcancel: 'Peruuta', hend: 'Lopeta chat', hwith: 'Keskustelet henkilön {n} kanssa.', hjoined: '{n} liittyi keskusteluun.', hback: 'Avustaja vastaa taas.', hclosed: 'Keskustelu henkilön kanssa päättyi.', hmissed: 'Kukaan ei päässyt liittymään juuri nyt. Jätä yhteystietosi, niin otamme sinuun yhteyttä.' },
    cs: { hwait: 'Čekáme, až se připojí pracovník… Mezitím můžete dál psát sem.', hcancel: 'Zrušit', hend: 'Ukončit chat', hwith: 'Píšete si s: {n}.', hjoined: '{n} se připojil(a) ke konverzaci.', hback: 'Opět odpovídá asistent.', hclosed: 'Chat s pracovníkem byl ukončen.', hmissed: 'Momentálně se nikdo nemůže připojit. Zanechte nám své údaje a ozveme se vám.' },
    ro: { hwait: 'Așteptăm să se alăture o persoană… Puteți continua să scrieți aici.', hcancel: 'Anulează', hend: 'Încheie chatul', hwith: 'Discutați cu {n}.', hjoined: '{n} s-a alăturat conversației.', hback: 'Asistentul răspunde din nou.', hclosed: 'Chatul cu o persoană s-a încheiat.', hmissed: 'Nimeni nu s-a putut alătura acum. Lăsați-ne datele dumneavoastră și vă vom contacta.' },
    hu: { hwait: 'Várakozás egy munkatársra… Itt továbbra is írhat.', hcancel: 'Mégse', hend: 'Csevegés befejezése', hwith: 'Önnel beszélget: {n}.', hjoined: '{n} csatlakozott a beszélgetéshez.', hback: 'Ismét az asszisztens válaszol.', hclosed: 'A munkatárssal folytatott csevegés véget ért.', hmissed: 'Jelenleg senki sem tud csatlakozni. Adja meg az adatait, és felvesszük Önnel a kapcsolatot.' },
    id: { hwait: 'Menunggu petugas bergabung… Anda tetap bisa menulis di sini.', hcancel: 'Batal', hend: 'Akhiri obrolan', hwith: 'Anda sedang mengobrol dengan {n}.', hjoined: '{n} bergabung dalam percakapan.', hback: 'Asisten kembali menjawab.', hclosed: 'Obrolan dengan petugas telah berakhir.', hmissed: 'Saat ini tidak ada petugas yang bisa bergabung. Tinggalkan data Anda dan kami akan menghubungi Anda kembali.' },
  };
  const explicitLang = (script.dataset.lang || '').trim();
  const pageLang = (explicitLang || document.documentElement.lang || 'en').toLowerCase();
  const primaryTag = pageLang.split(/[-_]/)[0];
  const L = T[primaryTag] ? primaryTag : 'en';
  const RTL = ['ar', 'he'];
  const t = Object.assign({}, T.en, TH.en, T[L], TH[L]);
  const seconds = (n) => {
    try { return new Intl.NumberFormat(L, { style: 'unit', unit: 'second', unitDisplay: 'long' }).format(n); } catch { return n + ' s'; }
  };

  // ---- styles (constructable stylesheets: allowed under style-src 'self') --------------------------------
  const CSS = `
:host{all:initial;position:fixed;z-index:2147483000;bottom:20px;right:20px;display:block;
--sitebot-primary:#0b5fff;--sitebot-on-primary:#fff;--sitebot-link:#0b5fff;--sitebot-bg:#fff;--sitebot-text:#1b1b1f;
--sitebot-radius:14px;--sitebot-font:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
font:15px/1.45 var(--sitebot-font);color:var(--sitebot-text)}
:host([data-position=bottom-left]){right:auto;left:20px}
*,*::before,*::after{box-sizing:border-box}
[hidden]{display:none!important}
button,input,textarea{font:inherit;color:inherit;margin:0}
button{cursor:pointer}
button:disabled{cursor:default;opacity:.6}
a{color:var(--sitebot-link)}
:focus{outline:none}
:focus-visible{outline:3px solid var(--sitebot-link);outline-offset:2px}
.launcher{display:flex;align-items:center;justify-content:center;width:56px;height:56px;border:0;border-radius:50%;
background:var(--sitebot-primary);color:var(--sitebot-on-primary);box-shadow:0 4px 14px rgba(0,0,0,.25);padding:0}
.launcher:focus-visible{outline-offset:3px;box-shadow:0 0 0 3px #fff,0 4px 14px rgba(0,0,0,.25)}
.launcher svg{width:28px;height:28px}
.panel{position:absolute;bottom:72px;right:0;width:min(380px,calc(100vw - 40px));height:min(600px,calc(100vh - 120px));
height:min(600px,calc(100dvh - 120px));display:flex;flex-direction:column;background:var(--sitebot-bg);color:var(--sitebot-text);
border-radius:var(--sitebot-radius);box-shadow:0 12px 40px rgba(0,0,0,.22),0 0 0 1px rgba(0,0,0,.08);overflow:hidden;text-align:start}
:host([data-position=bottom-left]) .panel{right:auto;left:0}
.head{display:flex;align-items:center;gap:8px;padding-block:10px;padding-inline:16px 8px;background:var(--sitebot-primary);color:var(--sitebot-on-primary)}
.head h2{flex:1;margin:0;font-size:16px;font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.head :focus-visible{outline-color:var(--sitebot-on-primary)}
.icon{display:inline-flex;align-items:center;justify-content:center;width:36px;height:36px;padding:0;border:0;border-radius:8px;background:transparent}
.icon svg{width:20px;height:20px}
.log,.lead{flex:1;overflow-y:auto;overscroll-behavior:contain;padding:14px}
.log{display:flex;flex-direction:column;gap:10px}
.msg{max-width:88%;padding:9px 12px;border-radius:12px;overflow-wrap:anywhere}
.msg[data-role=user]{align-self:flex-end;background:var(--sitebot-primary);color:var(--sitebot-on-primary);border-end-end-radius:4px;white-space:pre-wrap}
.msg[data-role=assistant],.bot{align-self:flex-start;background:#f1f3f6;color:#1b1b1f;border-end-start-radius:4px}
.txt{white-space:pre-wrap}
.txt:empty{display:none}
.cite{font-size:.8em;font-weight:600;vertical-align:super;line-height:1;padding:0 1px}
.wait{color:#4a4f57;font-style:italic}
.srcs{margin-top:8px;padding-top:6px;border-top:1px solid #c9ced6;font-size:13px}
.srcs p{margin:0 0 2px;font-weight:600}
.srcs ol{margin:0;padding-inline-start:20px}
.srcs li{margin:2px 0}
.fb{display:flex;gap:4px;margin-top:6px}
.fb button{width:32px;height:32px;border:1px solid #8b919b;background:#fff;color:#3b4048;border-radius:8px}
.fb svg{width:16px;height:16px}
.fb [aria-pressed=true]{background:var(--sitebot-primary);border-color:var(--sitebot-primary);color:var(--sitebot-on-primary)}
.err{margin:6px 0 0;color:#a1160a}
.sec{display:inline-block;margin-top:6px;padding:5px 10px;border:1px solid var(--sitebot-link);border-radius:8px;background:#fff;color:var(--sitebot-link);font-size:14px}
.foot{border-top:1px solid #dde1e7;padding:10px 12px 12px}
.row{display:flex;gap:8px}
.row input{flex:1;min-width:0}
input,textarea{width:100%;padding:9px 11px;border:1px solid #767d88;border-radius:10px;background:#fff;color:#1b1b1f;font-size:16px}
textarea{min-height:90px;resize:vertical}
[aria-invalid=true]{border-color:#a1160a}
.send{flex:none;display:inline-flex;align-items:center;justify-content:center;width:44px;border:0;border-radius:10px;background:var(--sitebot-primary);color:var(--sitebot-on-primary)}
.send svg{width:20px;height:20px}
[dir=rtl] .send svg{transform:scaleX(-1)}
.link{margin-top:8px;padding:2px 0;border:0;background:none;color:var(--sitebot-link);text-decoration:underline;font-size:14px}
.lead p{margin:0 0 12px}
.lead label{display:block;margin:0 0 4px;font-weight:600;font-size:14px}
.lead input,.lead textarea{margin-bottom:12px}
.lead .err{margin:-6px 0 12px}
.btns{display:flex;gap:8px;flex-wrap:wrap}
.pri{padding:9px 16px;border:0;border-radius:10px;background:var(--sitebot-primary);color:var(--sitebot-on-primary);font-weight:600}
.lead .sec{margin:0;padding:8px 14px;font-size:15px}
.ok{font-weight:600}
.sugg{display:flex;flex-wrap:wrap;gap:6px;align-self:stretch}
.sugg button{max-width:100%;padding:6px 12px;border:1px solid var(--sitebot-link);border-radius:16px;background:#fff;color:var(--sitebot-link);font-size:14px;text-align:start;overflow-wrap:anywhere}
.msg[data-role=staff]{align-self:flex-start;background:#e6f4ea;color:#1b1b1f;border-end-start-radius:4px;white-space:pre-wrap}
.who{display:block;font-size:13px;font-weight:600;margin-bottom:2px}
.note{align-self:center;max-width:92%;margin:0;color:#4a4f57;font-size:13px;font-style:italic;text-align:center}
.ho{display:flex;align-items:center;gap:8px;flex-wrap:wrap;padding:8px 12px;border-top:1px solid #dde1e7;background:#f7f8fa;font-size:14px}
.ho p{flex:1;min-width:12em;margin:0}
.ho .sec{margin:0}
.ho[data-state=waiting] p::before{content:"";display:inline-block;width:8px;height:8px;margin-inline-end:6px;border-radius:50%;background:#b26b00;vertical-align:middle}
.ho[data-state=held] p::before{content:"";display:inline-block;width:8px;height:8px;margin-inline-end:6px;border-radius:50%;background:#137333;vertical-align:middle}
.vh{position:absolute!important;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
@media (max-width:480px){
.panel{position:fixed;left:0;right:0;top:var(--sb-vvt,0px);bottom:auto;width:100%;height:100vh;height:var(--sb-vvh,100dvh);border-radius:0}
:host([data-open]) .launcher{display:none}
}
@media (forced-colors:active){.launcher,.send,.pri,.msg,.panel{border:1px solid CanvasText}}`;
  const sheet = (text) => { const s = new CSSStyleSheet(); s.replaceSync(text); return s; };
  let baseSheet, themeSheet, vvSheet;
  try { baseSheet = sheet(CSS); themeSheet = sheet(''); vvSheet = sheet(''); } catch { return; }

  // ---- colours: text on the primary colour and a link colour that keep AA contrast -----------------------
  const rgbOf = (hex) => {
    const h = hex.slice(1);
    const f = h.length === 3 ? h.split('').map((c) => c + c) : [h.slice(0, 2), h.slice(2, 4), h.slice(4, 6)];
    return f.map((x) => parseInt(x, 16));
  };
  const lum = (rgb) => {
    const [r, g, b] = rgb.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const contrast = (a, b) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  const hexOf = (rgb) => '#' + rgb.map((v) => v.toString(16).padStart(2, '0')).join('');
  const BUBBLE = lum([0xf1, 0xf3, 0xf6]);
  const applyColour = (hex) => {
    if (typeof hex !== 'string' || !/^#([0-9a-f]{3}|[0-9a-f]{6})$/i.test(hex)) return;
    const rgb = rgbOf(hex);
    const l = lum(rgb);
    const on = contrast(l, 0) >= contrast(l, 1) ? '#000' : '#fff';
    let link = rgb;
    for (let i = 0; i < 40 && contrast(lum(link), BUBBLE) < 4.6; i++) link = link.map((v) => Math.floor(v * 0.88));
    themeSheet.replaceSync(`:host{--sitebot-primary:${hexOf(rgb)};--sitebot-on-primary:${on};--sitebot-link:${hexOf(link)}}`);
  };

  // ---- small helpers -------------------------------------------------------------------------------------
  const h = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      const v = attrs[k];
      if (v == null || v === false) continue;
      if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of kids) if (c != null) e.append(c);
    return e;
  };
  const NS = 'http://www.w3.org/2000/svg';
  const ICONS = {
    chat: 'M20 2H4a2 2 0 0 0-2 2v18l4-4h14a2 2 0 0 0 2-2V4a2 2 0 0 0-2-2z',
    close: 'M19 6.41 17.59 5 12 10.59 6.41 5 5 6.41 10.59 12 5 17.59 6.41 19 12 13.41 17.59 19 19 17.59 13.41 12z',
    send: 'M2.01 21 23 12 2.01 3 2 10l15 2-15 2z',
    up: 'M1 21h4V9H1v12zm22-11c0-1.1-.9-2-2-2h-6.31l.95-4.57.03-.32c0-.41-.17-.79-.44-1.06L14.17 1 7.59 7.59C7.22 7.95 7 8.45 7 9v10c0 1.1.9 2 2 2h9c.83 0 1.54-.5 1.84-1.22l3.02-7.05c.09-.23.14-.47.14-.73v-2z',
    down: 'M15 3H6c-.83 0-1.54.5-1.84 1.22l-3.02 7.05c-.09.23-.14.47-.14.73v2c0 1.1.9 2 2 2h6.31l-.95 4.57-.03.32c0 .41.17.79.44 1.06L9.83 23l6.59-6.59c.36-.36.58-.86.58-1.41V5c0-1.1-.9-2-2-2zm4 0v12h4V3h-4z',
  };
  const icon = (name) => {
    const s = document.createElementNS(NS, 'svg');
    s.setAttribute('viewBox', '0 0 24 24');
    s.setAttribute('aria-hidden', 'true');
    s.setAttribute('focusable', 'false');
    const p = document.createElementNS(NS, 'path');
    p.setAttribute('d', ICONS[name]);
    p.setAttribute('fill', 'currentColor');
    s.append(p);
    return s;
  };
  const rid = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
  const safeUrl = (u) => {
    try { const x = new URL(u); return x.protocol === 'https:' || x.protocol === 'http:' ? x.href : null; } catch { return null; }
  };
  const store = {
    get(k) { try { return JSON.parse(sessionStorage.getItem(k)); } catch { return null; } },
    set(k, v) { try { sessionStorage.setItem(k, JSON.stringify(v)); } catch { /* storage full or disabled */ } },
  };
  // Mirrors the server's e-mail check (local part and a domain of at least two labels).
  const validEmail = (s) => {
    if (s.length > 254) return false;
    const at = s.lastIndexOf('@');
    if (at < 1) return false;
    const local = s.slice(0, at), domain = s.slice(at + 1);
    const labels = domain.split('.');
    return local.length <= 64 && !/^\.|\.$|\.\./.test(local) && /^[\p{L}\p{N}!#$%&'*+/=?^_`{|}~.-]+$/u.test(local) &&
      labels.length >= 2 && labels.every((l) => l.length > 0 && l.length <= 63 && /^[\p{L}\p{N}-]+$/u.test(l) && !/^-|-$/.test(l));
  };

  // ---- session state (sessionStorage, keyed by site; no cookies) -----------------------------------------
  const KEY = 'sitebot:' + siteId;
  const saved = store.get(KEY) || {};
  let conversationId = typeof saved.cid === 'string' ? saved.cid : null;
  // The conversation's secret (its first answer gives it) and where its hand-off is: s (null, 'waiting',
  // 'held'), n (the person's name), last (the id of the last stream event shown: a resumed stream starts
  // after it, so nothing is shown twice).
  let convToken = typeof saved.tok === 'string' ? saved.tok : null;
  const ho = Object.assign({ s: null, n: '', last: 0 }, saved.ho && typeof saved.ho === 'object' ? saved.ho : {});
  let msgs = Array.isArray(saved.msgs) ? saved.msgs.filter((m) => m && typeof m.t === 'string') : [];
  let isOpen = saved.open === true;
  const save = () => { msgs = msgs.slice(-60); store.set(KEY, { cid: conversationId, tok: convToken, ho, open: isOpen, msgs }); };
  let sessionId = store.get('sitebot:session');
  if (typeof sessionId !== 'string') { sessionId = rid(); store.set('sitebot:session', sessionId); }
  let cfg = { name: '', greeting: null, leadForm: true, handoff: false, questions: [] };

  // ---- network ---------------------------------------------------------------------------------------------
  const HEADERS = { 'Content-Type': 'application/json', 'X-Site-Id': siteId };
  const api = (path, body, extra, keepalive) => fetch(API + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: Object.assign({}, HEADERS, extra),
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    credentials: 'omit', mode: 'cors', cache: 'no-store', keepalive: !!keepalive,
  });
  // An error (a Response, a problem JSON from an SSE error event, or nothing for a network failure) as {k, n}.
  const problemOf = (status, retryAfter, problem) => {
    if (status === 429 || (problem && problem.code === 'rate_limited')) {
      let n = parseInt(retryAfter, 10);
      if (!(n >= 0) && retryAfter) n = Math.ceil((Date.parse(retryAfter) - Date.now()) / 1000);
      return n > 0 && n < 86400 ? { k: 'rate', n } : { k: 'rate0' };
    }
    return { k: status ? 'err' : 'net' };
  };
  const errText = (e) => (e.k === 'rate' ? t.rate.replace('{n}', seconds(e.n)) : t[e.k] || t.err);

  // Analytics: batched, flushed on a short timer and on pagehide (keepalive); failures are silent.
  const queue = [];
  let flushTimer = 0;
  const flush = (keepalive) => {
    clearTimeout(flushTimer);
    flushTimer = 0;
    while (queue.length) {
      const events = queue.splice(0, 50);
      try { api('/events', { events }, null, keepalive).catch(() => {}); } catch { /* silent */ }
    }
  };
  const track = (type, extra) => {
    if (previewToken) return; // the console's preview is not a visitor
    queue.push(Object.assign({ type, sessionId, at: new Date().toISOString() }, extra));
    if (!flushTimer) flushTimer = setTimeout(flush, 1500);
  };
  addEventListener('pagehide', () => flush(true));
  document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'hidden') flush(true); });

  // Server-Sent Events over fetch: calls on(event, data, id) per event; resolves when the body ends.
  const readSSE = async (res, on) => {
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '', ev = '', data = [], id = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      let i;
      while ((i = buf.search(/[\r\n]/)) >= 0) {
        if (buf[i] === '\r' && i === buf.length - 1) break; // a \r\n may be split over two chunks
        const line = buf.slice(0, i);
        buf = buf.slice(i + (buf[i] === '\r' && buf[i + 1] === '\n' ? 2 : 1));
        if (line === '') {
          if (data.length) on(ev || 'message', data.join('\n'), id);
          ev = '';
          data = [];
        } else if (line[0] !== ':') {
          const c = line.indexOf(':');
          const field = c < 0 ? line : line.slice(0, c);
          let v = c < 0 ? '' : line.slice(c + 1);
          if (v[0] === ' ') v = v.slice(1);
          if (field === 'event') ev = v;
          else if (field === 'data') data.push(v);
          else if (field === 'id') id = v;
        }
      }
    }
  };

  // ---- DOM -----------------------------------------------------------------------------------------------
  class SitebotWidget extends HTMLElement {}
  customElements.define('sitebot-widget', SitebotWidget);
  const host = document.createElement('sitebot-widget');
  host.setAttribute('lang', L);
  const root = host.attachShadow({ mode: 'open' });
  root.adoptedStyleSheets = [baseSheet, themeSheet, vvSheet];

  let seq = 0;
  const uid = (p) => `sb-${p}-${++seq}`;
  const status = h('div', { part: 'status', class: 'vh', role: 'status', 'aria-live': 'polite', 'aria-atomic': 'true' });
  let sayTimer = 0;
  const say = (s) => { clearTimeout(sayTimer); status.textContent = ''; sayTimer = setTimeout(() => { status.textContent = s; }, 60); };

  const titleId = uid('title');
  const title = h('h2', { id: titleId }, t.title);
  const closeBtn = h('button', { type: 'button', class: 'icon', 'aria-label': t.close, onclick: () => close(true) }, icon('close'));
  const greeting = h('div', { class: 'msg bot', dir: 'auto' });
  // Suggested questions: shown until the first question, each only ever text.
  const sugg = h('div', { class: 'sugg', hidden: true });
  const log = h('div', { class: 'log', role: 'region', 'aria-label': t.log, tabindex: '0' }, greeting, sugg);
  const input = h('input', { part: 'input', type: 'text', name: 'question', autocomplete: 'off', maxlength: '2000', placeholder: t.ph, 'aria-label': t.q, enterkeyhint: 'send' });
  const sendBtn = h('button', { part: 'send', class: 'send', type: 'submit', 'aria-label': t.send }, icon('send'));
  const leadLink = () => h('button', { part: 'lead-open', type: 'button', class: 'link', onclick: talk }, t.talk);
  const footLead = leadLink();
  const form = h('form', { class: 'row', onsubmit: (e) => {
    e.preventDefault();
    const q = input.value.trim();
    if (!q) return;
    if (ho.s) { input.value = ''; toPerson(q); } else if (!busy) { input.value = ''; ask(q); }
  } }, input, sendBtn);
  const foot = h('div', { class: 'foot' }, form, footLead);
  // While a person is awaited or holds the conversation: what is going on, and a way out.
  const hoText = h('p', { dir: 'auto' });
  const hoBtn = h('button', { part: 'handoff-cancel', type: 'button', class: 'sec', onclick: () => cancelPerson() });
  const hoBar = h('div', { part: 'handoff', class: 'ho', hidden: true }, hoText, hoBtn);

  // Contact form ("talk to a person").
  const field = (part, tag, label, attrs) => {
    const id = uid(part);
    const el = h(tag, Object.assign({ part, id, name: part.slice(5) }, attrs));
    return [h('label', { for: id }, label), el];
  };
  const [nameLabel, leadName] = field('lead-name', 'input', `${t.name} (${t.opt})`, { type: 'text', autocomplete: 'name', maxlength: '200' });
  const emailErrId = uid('emailerr');
  const [emailLabel, leadEmail] = field('lead-email', 'input', t.email, { type: 'email', autocomplete: 'email', maxlength: '254', required: true, 'aria-describedby': emailErrId });
  const [msgLabel, leadMsg] = field('lead-message', 'textarea', `${t.msg} (${t.opt})`, { maxlength: '5000' });
  const leadErr = h('p', { class: 'err', id: emailErrId, hidden: true });
  const leadSubmit = h('button', { part: 'lead-submit', type: 'submit', class: 'pri' }, t.submit);
  const leadBack = h('button', { type: 'button', class: 'sec', onclick: () => closeLead(true) }, t.back);
  const leadWhy = h('p', { class: 'ok', hidden: true }, t.hmissed.split(/(?<=[.。])\s*/)[0]); // why the form opened, not a person
  const leadForm = h('form', { novalidate: true, onsubmit: submitLead },
    leadWhy, h('p', null, t.intro), nameLabel, leadName, emailLabel, leadEmail, leadErr, msgLabel, leadMsg, h('div', { class: 'btns' }, leadSubmit, leadBack));
  const leadOk = h('p', { class: 'ok', tabindex: '-1', hidden: true }, t.sent);
  const leadOkBack = h('button', { type: 'button', class: 'sec', hidden: true, onclick: () => closeLead(true) }, t.back);
  const lead = h('div', { class: 'lead', hidden: true }, leadForm, leadOk, leadOkBack);

  const panel = h('div', { part: 'panel', class: 'panel', role: 'dialog', 'aria-labelledby': titleId, hidden: true, lang: L, dir: RTL.includes(L) ? 'rtl' : 'ltr' },
    h('div', { class: 'head' }, title, closeBtn), log, lead, hoBar, foot);
  const panelId = uid('panel');
  panel.id = panelId;
  const launcher = h('button', { part: 'launcher', class: 'launcher', type: 'button', 'aria-expanded': 'false', 'aria-controls': panelId, 'aria-label': t.open, onclick: () => (isOpen ? close(true) : open(true)) }, icon('chat'));
  root.append(panel, launcher, status);

  const setGreeting = () => {
    const g = cfg.greeting && typeof cfg.greeting === 'object' ? cfg.greeting : {};
    const text = [pageLang, primaryTag, L].map((k) => g[k]).find((v) => typeof v === 'string' && v.trim());
    greeting.textContent = text || t.hello;
  };
  setGreeting();
  const showSuggestions = () => {
    const qs = cfg.questions.filter((q) => typeof q === 'string' && q.trim()).slice(0, 5);
    sugg.replaceChildren(...qs.map((q) => h('button', { part: 'suggestion', type: 'button', dir: 'auto', onclick: () => {
      if (busy || ho.s) return;
      sugg.hidden = true;
      ask(q.trim().slice(0, 2000));
      input.focus();
    } }, q.trim())));
    sugg.hidden = !qs.length || msgs.length > 0 || !!ho.s;
  };

  const nearBottom = () => log.scrollHeight - log.scrollTop - log.clientHeight < 120;
  const toBottom = () => { log.scrollTop = log.scrollHeight; };

  // ---- open / close ----------------------------------------------------------------------------------------
  function open(byUser) {
    isOpen = true;
    panel.hidden = false;
    host.setAttribute('data-open', '');
    launcher.setAttribute('aria-expanded', 'true');
    launcher.setAttribute('aria-label', t.close);
    launcher.replaceChildren(icon('close'));
    toBottom();
    if (byUser) { (lead.hidden ? input : leadForm.hidden ? leadOk : leadName).focus(); track('widget_opened'); }
    save();
  }
  function close(focusLauncher) {
    isOpen = false;
    panel.hidden = true;
    host.removeAttribute('data-open');
    launcher.setAttribute('aria-expanded', 'false');
    launcher.setAttribute('aria-label', t.open);
    launcher.replaceChildren(icon('chat'));
    if (focusLauncher) launcher.focus();
    save();
  }
  root.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && isOpen) { e.preventDefault(); e.stopPropagation(); close(true); }
  });

  // ---- contact form ----------------------------------------------------------------------------------------
  let lastLead = {};
  function openLead(why) {
    leadWhy.hidden = why !== true;
    lead.hidden = false;
    log.hidden = foot.hidden = hoBar.hidden = true;
    leadForm.hidden = false;
    leadOk.hidden = leadOkBack.hidden = true;
    leadName.focus();
    track('lead_form_opened');
  }
  function closeLead(focus) {
    lead.hidden = true;
    log.hidden = foot.hidden = false;
    hoBar.hidden = !ho.s;
    toBottom();
    if (focus) input.focus();
  }
  const leadError = (text, invalid) => {
    leadErr.textContent = text;
    leadErr.hidden = false;
    if (invalid) { leadEmail.setAttribute('aria-invalid', 'true'); leadEmail.focus(); }
    say(text);
  };
  async function submitLead(e) {
    e.preventDefault();
    const email = leadEmail.value.trim();
    if (!validEmail(email)) return leadError(t.bad, true);
    leadEmail.removeAttribute('aria-invalid');
    leadErr.hidden = true;
    const body = { email };
    const name = leadName.value.trim(), message = leadMsg.value.trim();
    if (name) body.name = name.slice(0, 200);
    if (message) body.message = message.slice(0, 5000);
    if (/^https?:/.test(location.href) && location.href.length <= 2048) body.pageUrl = location.href;
    // The transcript goes with the lead only with the conversation's token (an id alone opens nothing).
    const withConv = !!(conversationId && convToken);
    if (withConv) body.conversationId = conversationId;
    const json = JSON.stringify(body);
    if (json !== lastLead.json) lastLead = { json, key: rid() }; // a resend of the same form keeps its key
    leadSubmit.disabled = true;
    try {
      const res = await api('/leads', json, Object.assign({ 'Idempotency-Key': lastLead.key }, withConv ? convHeaders() : {}));
      if (res.ok) {
        lastLead = {};
        leadForm.reset();
        leadForm.hidden = true;
        leadOk.hidden = leadOkBack.hidden = false;
        leadOk.focus();
        say(t.sent);
        track('lead_submitted');
      } else {
        const p = await res.json().catch(() => null);
        const emailBad = res.status === 422 && p && Array.isArray(p.errors) && p.errors.some((x) => x && x.field === 'email');
        if (emailBad) leadError(t.bad, true);
        else leadError(res.status === 422 ? t.inv : errText(problemOf(res.status, res.headers.get('Retry-After'), p)));
      }
    } catch {
      leadError(t.net);
    } finally {
      leadSubmit.disabled = false;
    }
  }

  // ---- messages --------------------------------------------------------------------------------------------
  // m = {d: the saved record, el, txt, pend, cites}; d = {r:'user'|'assistant', t, q, id, s, res, lang, rt, e}
  const userMsg = (d) => {
    const el = h('div', { part: 'message', class: 'msg', 'data-role': 'user', dir: 'auto' }, d.t);
    log.append(el);
    return el;
  };
  // A person's message: their name, then their text (both only ever text).
  const staffMsg = (d) => log.append(h('div', { part: 'message staff-message', class: 'msg', 'data-role': 'staff', dir: 'auto' }, h('span', { class: 'who' }, d.n || ''), d.t));
  const noteMsg = (d) => log.append(h('p', { part: 'note', class: 'note', dir: 'auto' }, d.t));
  const botMsg = (d) => {
    const txt = h('div', { class: 'txt', dir: 'auto' });
    const el = h('div', { part: 'message', class: 'msg', 'data-role': 'assistant' }, txt);
    log.append(el);
    return { d, el, txt, pend: '', cites: [], n: ++seq };
  };
  // Appends answer text; `[n]` markers become citation links (linked once the sources are known).
  const addText = (m, s, final) => {
    let text = m.pend + s;
    m.pend = '';
    const j = text.lastIndexOf('[');
    if (!final && j >= 0 && /^\[\d{0,3}$/.test(text.slice(j))) { m.pend = text.slice(j); text = text.slice(0, j); }
    const re = /\[(\d{1,3})\]/g;
    let k = 0, r;
    while ((r = re.exec(text))) {
      if (r.index > k) m.txt.append(text.slice(k, r.index));
      const a = h('a', { part: 'citation', class: 'cite' }, r[0]);
      a.n = +r[1];
      m.cites.push(a);
      m.txt.append(a);
      k = re.lastIndex;
    }
    if (k < text.length) m.txt.append(text.slice(k));
  };
  const srcId = (m, i) => `sb-src-${m.n}-${i}`;
  const linkTo = (a, url, m) => {
    a.href = url;
    a.target = '_blank';
    a.rel = 'noopener';
    a.addEventListener('click', () => track('source_clicked', { queryId: m.d.id, url }));
  };
  // The answer is complete: citations, sources, feedback, contact offer.
  const finish = (m) => {
    const d = m.d;
    addText(m, '', true);
    const sources = Array.isArray(d.s) ? d.s : [];
    if (d.lang && /^[a-z]{2,3}(-[a-z0-9]{1,8})*$/i.test(d.lang)) m.txt.setAttribute('lang', d.lang);
    for (const a of m.cites) {
      const src = sources[a.n - 1];
      if (!src) { a.replaceWith(`[${a.n}]`); continue; }
      const url = safeUrl(src.url);
      a.setAttribute('aria-label', `${t.src1} [${a.n}]: ${src.title || url || ''}`.trim()); // contains the visible "[n]"
      if (url) linkTo(a, url, m);
      else {
        a.href = '#' + srcId(m, a.n);
        a.addEventListener('click', (e) => {
          e.preventDefault();
          const target = root.getElementById(srcId(m, a.n));
          if (target) { target.scrollIntoView({ block: 'nearest' }); target.focus(); }
        });
      }
    }
    if (sources.length) {
      const ol = h('ol');
      sources.forEach((src, i) => {
        const url = safeUrl(src && src.url);
        let label = src && typeof src.title === 'string' && src.title.trim();
        if (!label && url) label = new URL(url).hostname;
        const item = url ? h('a', { part: 'source', id: srcId(m, i + 1) }, label || `${t.src1} ${i + 1}`)
          : h('span', { part: 'source', id: srcId(m, i + 1), tabindex: '-1' }, label || `${t.src1} ${i + 1}`);
        if (url) linkTo(item, url, m);
        ol.append(h('li', null, item));
      });
      m.el.append(h('div', { class: 'srcs' }, h('p', null, t.src), ol));
    }
    if (d.id) {
      const up = h('button', { part: 'feedback-up', type: 'button', 'aria-label': t.up, 'aria-pressed': 'false' }, icon('up'));
      const down = h('button', { part: 'feedback-down', type: 'button', 'aria-label': t.down, 'aria-pressed': 'false' }, icon('down'));
      const show = () => { up.setAttribute('aria-pressed', String(d.rt === 'up')); down.setAttribute('aria-pressed', String(d.rt === 'down')); };
      const rate = async (rating) => {
        const before = d.rt;
        d.rt = rating;
        show();
        save();
        try {
          const res = await api('/feedback', { queryId: d.id, rating });
          if (!res.ok) throw new Error(String(res.status));
          say(t.thx);
          track('feedback_given', { queryId: d.id });
        } catch {
          d.rt = before;
          show();
          save();
          say(t.err);
        }
      };
      up.addEventListener('click', () => rate('up'));
      down.addEventListener('click', () => rate('down'));
      show();
      m.el.append(h('div', { class: 'fb' }, up, down));
    }
    if (d.res === false && (cfg.leadForm !== false || cfg.handoff)) m.el.append(leadLink());
  };
  const fail = (m, e) => {
    m.d.e = e;
    const text = errText(e);
    const retry = h('button', { type: 'button', class: 'sec', onclick: () => {
      if (busy) return;
      m.el.remove();
      const i = msgs.indexOf(m.d);
      if (i >= 0) msgs.splice(i, 1);
      ask(m.d.q, true);
    } }, t.retry);
    m.el.append(h('p', { class: 'err' }, text), m.d.q ? retry : null);
    if (m.pend) addText(m, '', true);
    return text;
  };
  // Re-renders a saved conversation (after a reload).
  for (const d of msgs) {
    if (d.r === 'user') { const el = userMsg(d); if (d.e) el.after(h('p', { class: 'err note' }, errText(d.e))); }
    else if (d.r === 'staff') staffMsg(d);
    else if (d.r === 'note') noteMsg(d);
    else {
      const m = botMsg(d);
      addText(m, d.t, true);
      if (d.e) fail(m, d.e);
      else finish(m);
    }
  }

  // ---- asking ----------------------------------------------------------------------------------------------
  let busy = false;
  async function ask(q, again) {
    busy = true;
    sugg.hidden = true;
    sendBtn.disabled = true;
    if (!again) {
      const u = { r: 'user', t: q };
      msgs.push(u);
      userMsg(u);
      track('question_asked');
    }
    const d = { r: 'assistant', t: '', q };
    msgs.push(d);
    const m = botMsg(d);
    const wait = h('span', { class: 'wait' }, t.wait);
    m.el.append(wait);
    toBottom();
    say(t.wait);
    const body = { question: q };
    const withConv = !!(conversationId && convToken);
    if (withConv) body.conversationId = conversationId;
    if (explicitLang) body.lang = explicitLang;
    let ended = false;
    const end = (e) => {
      ended = true;
      wait.remove();
      if (e) say(fail(m, e));
      save();
      toBottom();
    };
    try {
      const res = await api('/query/stream', body, Object.assign({ Accept: 'text/event-stream' }, withConv ? convHeaders() : {}));
      if (!res.ok) {
        const p = await res.json().catch(() => null);
        if (res.status === 404 && p && p.code === 'conversation_not_found' && conversationId) {
          // The conversation expired or belongs elsewhere: start a new one with the same question.
          conversationId = convToken = null;
          m.el.remove();
          msgs.splice(msgs.indexOf(d), 1);
          return await ask(q, true);
        }
        if (res.status === 409 && p && p.code === 'handoff_active' && conversationId && convToken) {
          // A person is in this conversation (another tab asked): the question goes to them.
          m.el.remove();
          msgs.splice(msgs.indexOf(d), 1);
          const u = msgs[msgs.length - 1];
          if (u && u.r === 'user' && u.t === q) { msgs.pop(); log.lastElementChild && log.lastElementChild.remove(); }
          ended = true;
          wait.remove();
          setPerson('waiting');
          listen();
          return toPerson(q);
        }
        return end(problemOf(res.status, res.headers.get('Retry-After'), p));
      }
      await readSSE(res, (ev, data) => {
        if (ended) return;
        if (ev === 'token') {
          const stick = nearBottom();
          wait.remove();
          d.t += data;
          addText(m, data);
          if (stick) toBottom();
        } else if (ev === 'done') {
          const x = JSON.parse(data);
          Object.assign(d, { id: typeof x.id === 'string' ? x.id : undefined, res: x.resolved, lang: x.lang,
            s: (Array.isArray(x.sources) ? x.sources : []).map((s) => ({ title: s && s.title, url: s && s.url })) });
          if (typeof x.conversationId === 'string') conversationId = x.conversationId;
          if (typeof x.conversationToken === 'string') convToken = x.conversationToken;
          finish(m);
          end();
          say(d.t.replace(/\s?\[\d{1,3}\]/g, ''));
          track('answer_shown', { queryId: d.id });
        } else if (ev === 'error') {
          let p = null;
          try { p = JSON.parse(data); } catch { /* not JSON */ }
          end(p && p.code === 'rate_limited' ? { k: 'rate0' } : { k: 'err' }); // what arrived stays
        }
      });
      if (!ended) end({ k: d.t ? 'cut' : 'net' });
    } catch {
      if (!ended) end({ k: d.t ? 'cut' : 'net' });
    } finally {
      busy = false;
      sendBtn.disabled = false;
    }
  }

  // ---- a person takes over -----------------------------------------------------------------------------------
  // The conversation's event stream is the truth: every state change and message comes with an id, and
  // `ho.last` is the last one shown, so a reload or a dropped connection resumes after it (Last-Event-ID)
  // and shows nothing twice. The visitor's own messages appear at once and are matched to their event.
  const convHeaders = () => ({ 'X-Conversation-Token': convToken || '' });
  const convPath = (what) => `/conversations/${encodeURIComponent(conversationId)}/${what}`;
  const note = (text) => { const d = { r: 'note', t: text }; msgs.push(d); noteMsg(d); };
  function setPerson(s, name) {
    ho.s = s;
    if (name !== undefined) ho.n = name;
    hoBar.hidden = !s || !lead.hidden;
    hoBar.setAttribute('data-state', s || '');
    footLead.hidden = !!s || (!cfg.leadForm && !cfg.handoff);
    hoText.textContent = s === 'held' ? t.hwith.replace('{n}', ho.n) : t.hwait;
    hoBtn.textContent = s === 'held' ? t.hend : t.hcancel;
    input.placeholder = s ? t.msg : t.ph;
    // Back to the assistant: the stream closes once what it still had to say has come (a backlog comes at once).
    clearTimeout(idleStop);
    if (!s) idleStop = setTimeout(() => { if (!ho.s) stopListening(); }, 1500);
    save();
  }
  let streamAbort = null, backoff = 0, retryTimer = 0, idleStop = 0;
  function stopListening() {
    clearTimeout(retryTimer);
    if (streamAbort) { streamAbort.abort(); streamAbort = null; }
  }
  function onEvent(ev, data, id) {
    const n = parseInt(id, 10);
    if (!(n > ho.last)) return; // shown before this reload or reconnection
    let x;
    try { x = JSON.parse(data); } catch { return; }
    const stick = nearBottom();
    if (ev === 'state') {
      const name = typeof x.displayName === 'string' ? x.displayName.slice(0, 120) : '';
      if (x.state === 'waiting') setPerson('waiting');
      else if (x.state === 'joined') { setPerson('held', name); note(t.hjoined.replace('{n}', name)); say(t.hjoined.replace('{n}', name)); }
      else if (x.state === 'handed_back' || x.state === 'closed' || x.state === 'missed') {
        setPerson(null);
        const text = x.state === 'handed_back' ? t.hback : x.state === 'closed' ? t.hclosed : t.hmissed;
        note(text);
        say(text);
        if (x.state === 'missed' && cfg.leadForm !== false) { ho.last = n; save(); openLead(true); }
      }
    } else if (ev === 'message' && typeof x.text === 'string') {
      if (x.role === 'staff') {
        const d = { r: 'staff', t: x.text, n: typeof x.displayName === 'string' ? x.displayName.slice(0, 120) : ho.n, eid: n };
        msgs.push(d);
        staffMsg(d);
        say(`${d.n}: ${d.t}`);
      } else if (!msgs.some((d) => d.eid === n)) {
        const mine = msgs.find((d) => d.r === 'user' && d.p && !d.eid && d.t === x.text);
        if (mine) mine.eid = n;
        else { const d = { r: 'user', t: x.text, p: 1, eid: n }; msgs.push(d); userMsg(d); }
      }
    }
    ho.last = n;
    save();
    if (stick) toBottom();
  }
  // Keeps the stream open while a person is awaited or holds the conversation; reconnects after a drop.
  async function listen() {
    clearTimeout(idleStop);
    if (streamAbort || !ho.s || !conversationId || !convToken) return;
    const ctl = new AbortController();
    streamAbort = ctl;
    let ok = false;
    try {
      const res = await fetch(API + convPath('events'), { headers: Object.assign({ 'X-Site-Id': siteId, Accept: 'text/event-stream', 'Last-Event-ID': String(ho.last) }, convHeaders()),
        credentials: 'omit', mode: 'cors', cache: 'no-store', signal: ctl.signal });
      if (res.status === 404) { setPerson(null); return; } // the conversation is gone (erased, or expired)
      if (res.ok) { ok = true; backoff = 0; await readSSE(res, onEvent); }
    } catch { /* dropped: resumed below */ } finally {
      if (streamAbort === ctl) streamAbort = null;
    }
    if (ctl.signal.aborted || !ho.s) return;
    backoff = ok ? 0 : Math.min(backoff ? backoff * 2 : 1000, 15000);
    retryTimer = setTimeout(listen, backoff);
  }
  addEventListener('online', () => { if (ho.s && !streamAbort) { clearTimeout(retryTimer); listen(); } });
  // "Talk to a person": a person when one can come, the contact form otherwise (as before hand-off).
  async function talk() {
    if (ho.s) { input.focus(); return; }
    if (!cfg.handoff || !conversationId || !convToken) return openLead();
    try {
      const res = await api(convPath('handoff'), '{}', convHeaders());
      const x = res.ok ? await res.json().catch(() => ({})) : null;
      if (!x) return openLead(res.status === 409);
      setPerson(x.state === 'held' ? 'held' : 'waiting');
      say(ho.s === 'held' ? t.hwith.replace('{n}', ho.n) : t.hwait);
      listen();
      input.focus();
    } catch {
      openLead();
    }
  }
  async function cancelPerson() {
    if (!ho.s) return;
    hoBtn.disabled = true;
    try {
      const res = await api(convPath('handoff/cancel'), '{}', convHeaders());
      // Done: the stream's `closed` event tells it (once, in order with everything else).
      if (res.status === 409) { setPerson(null); note(t.hclosed); say(t.hclosed); input.focus(); }
      else if (!res.ok) say(t.err);
    } catch {
      say(t.net);
    } finally {
      hoBtn.disabled = false;
    }
  }
  // The visitor's message to the person (awaited or present): shown at once, matched to its event later.
  async function toPerson(text) {
    const d = { r: 'user', t: text, p: 1 };
    msgs.push(d);
    const el = userMsg(d);
    toBottom();
    save();
    try {
      const res = await api(convPath('messages'), { text: text.slice(0, 2000) }, convHeaders());
      if (res.ok) {
        const x = await res.json().catch(() => ({}));
        const n = parseInt(x.id, 10);
        if (n > 0 && !msgs.some((m) => m !== d && m.eid === n)) d.eid = n;
      } else if (res.status === 409) {
        // The person handed back or closed meanwhile: the assistant answers this one.
        msgs.splice(msgs.indexOf(d), 1);
        el.remove();
        ask(text);
      } else {
        const p = await res.json().catch(() => null);
        d.e = problemOf(res.status, res.headers.get('Retry-After'), p);
        el.after(h('p', { class: 'err note' }, errText(d.e)));
        say(errText(d.e));
      }
    } catch {
      d.e = { k: 'net' };
      el.after(h('p', { class: 'err note' }, t.net));
      say(t.net);
    }
    save();
  }
  if (ho.s) { setPerson(ho.s); listen(); }

  // ---- config ----------------------------------------------------------------------------------------------
  const applyConfig = (c) => {
    if (!c || typeof c !== 'object') return;
    if (typeof c.name === 'string' && c.name.trim()) title.textContent = c.name.trim().slice(0, 120);
    cfg.greeting = c.greeting;
    setGreeting();
    applyColour(c.primaryColor);
    if (c.position === 'bottom-left' || c.position === 'bottom-right') host.setAttribute('data-position', c.position);
    cfg.leadForm = c.leadForm !== false;
    cfg.handoff = c.handoff === true;
    cfg.questions = c.suggestedQuestions && Array.isArray(c.suggestedQuestions.questions) ? c.suggestedQuestions.questions : [];
    showSuggestions();
    for (const b of root.querySelectorAll('[part~="lead-open"]')) b.hidden = (!cfg.leadForm && !cfg.handoff) || (b === footLead && !!ho.s);
  };
  const cfgPath = '/widget/config' + (/^[a-z]{2,3}([-_][a-z0-9]{1,8})*$/i.test(pageLang) ? '?lang=' + encodeURIComponent(pageLang) : '');
  api(cfgPath, undefined, previewToken ? { 'X-Widget-Preview': previewToken } : null).then((r) => (r.ok ? r.json() : null)).then(applyConfig).catch(() => {});

  // ---- phones: follow the visual viewport so the on-screen keyboard never hides the input ----------------
  const vv = window.visualViewport;
  if (vv) {
    let frame = 0;
    const update = () => {
      frame = 0;
      const stick = isOpen && nearBottom(); // the keyboard opening must not hide the latest message
      vvSheet.replaceSync(`:host{--sb-vvh:${Math.round(vv.height)}px;--sb-vvt:${Math.round(vv.offsetTop)}px}`);
      if (stick) toBottom();
    };
    const schedule = () => { if (!frame) frame = requestAnimationFrame(update); };
    vv.addEventListener('resize', schedule);
    vv.addEventListener('scroll', schedule);
    update();
  }

  const mount = () => {
    document.body.append(host);
    if (isOpen || previewToken) open(false);
    track('widget_loaded', { url: location.origin + location.pathname });
  };
  if (document.body) mount();
  else addEventListener('DOMContentLoaded', mount);
})();
